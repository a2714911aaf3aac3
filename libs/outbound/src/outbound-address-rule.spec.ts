import { describe, expect, it } from 'vitest';
import { OutboundAddressRule, parseCidrList } from './outbound-address-rule';

describe('OutboundAddressRule', () => {
  const rule = new OutboundAddressRule();

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['[::1]', 'loopback'],
    // IPv4 reached through IPv6: mapped (both spellings), compatible, NAT64, 6to4.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::', 'private'],
  ])('should refuse %s as %s', (address, kind) => {
    expect(rule.refusalOf(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('should allow the public address %s', (address) => {
    expect(rule.refusalOf(address)).toBeNull();
  });

  it('should refuse what is not an IP address', () => {
    expect(rule.refusalOf('localhost')).toBe('reserved');
  });

  it('should allow refused ranges the operator lists, and only those', () => {
    const allowing = new OutboundAddressRule(['127.0.0.0/8', '::1/128', '10.1.0.0/16', 'fd00:1::/64']);
    expect(allowing.refusalOf('127.0.0.1')).toBeNull();
    expect(allowing.refusalOf('::1')).toBeNull();
    expect(allowing.refusalOf('::ffff:127.0.0.1')).toBeNull();
    expect(allowing.refusalOf('10.1.2.3')).toBeNull();
    expect(allowing.refusalOf('fd00:1::5')).toBeNull();
    expect(allowing.refusalOf('10.2.0.1')).toBe('private');
    expect(allowing.refusalOf('fd00:2::1')).toBe('unique-local');
    expect(allowing.refusalOf('169.254.169.254')).toBe('link-local');
  });

  it('should allow a single address given without a prefix', () => {
    const one = new OutboundAddressRule(['127.0.0.2']);
    expect(one.refusalOf('127.0.0.2')).toBeNull();
    expect(one.refusalOf('127.0.0.1')).toBe('loopback');
  });
});

describe('parseCidrList', () => {
  it('should read a comma-separated list, ignoring blanks and spaces', () => {
    expect(parseCidrList(' 127.0.0.0/8, ::1/128,,10.0.0.1 ')).toEqual(['127.0.0.0/8', '::1/128', '10.0.0.1']);
    expect(parseCidrList('')).toEqual([]);
  });

  it.each(['127.0.0.0/33', '::1/129', 'localhost', '10.0.0.0/8/1', '10.0.0.0/x', '300.1.1.1/8'])(
    'should refuse %s naming it',
    (bad) => {
      expect(() => parseCidrList(`127.0.0.0/8,${bad}`)).toThrow(`"${bad}" is not a CIDR`);
    },
  );
});
