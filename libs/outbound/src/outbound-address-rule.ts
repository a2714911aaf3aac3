import { BlockList, isIP } from 'node:net';

/** Why an address is refused: the kind of range it lies in. */
export type RefusedAddressKind =
  | 'loopback'
  | 'private'
  | 'shared (CGNAT)'
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved';

type Family = 'ipv4' | 'ipv6';

/** [range, prefix, family, kind]; the first match names the kind, so narrower ranges come first. */
const REFUSED_RANGES: [string, number, Family, RefusedAddressKind][] = [
  ['255.255.255.255', 32, 'ipv4', 'broadcast'],
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (CGNAT)'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  // Deprecated site-local: still routed inside some networks.
  ['fec0::', 10, 'ipv6', 'private'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  // Local-use NAT64 (RFC 8215): whatever it translates to is a private choice of the network.
  ['64:ff9b:1::', 48, 'ipv6', 'private'],
];

/** One BlockList per kind, so a refusal can say which rule it is. */
const REFUSED: [RefusedAddressKind, BlockList][] = (() => {
  const byKind = new Map<RefusedAddressKind, BlockList>();
  for (const [range, prefix, family, kind] of REFUSED_RANGES) {
    const list = byKind.get(kind) ?? new BlockList();
    list.addSubnet(range, prefix, family);
    byKind.set(kind, list);
  }
  return [...byKind];
})();

/**
 * The outbound-address rule: loopback, private, shared, link-local, unique-local, multicast,
 * unspecified, broadcast and reserved addresses are refused unless an allowed CIDR covers them.
 * IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) is judged as the IPv4 address it reaches.
 */
export class OutboundAddressRule {
  private readonly allowed = new BlockList();

  /** `allowCidrs`: CIDRs (or bare addresses) the operator allows, e.g. `10.1.0.0/16`, `::1/128`. */
  constructor(readonly allowCidrs: readonly string[] = []) {
    for (const cidr of allowCidrs) {
      const { address, prefix, family } = parseCidr(cidr);
      this.allowed.addSubnet(address, prefix, family);
    }
  }

  /** The kind of refused range `address` lies in, or null if outbound requests may go there. */
  refusalOf(address: string): RefusedAddressKind | null {
    const ip = stripBrackets(address);
    const family = familyOf(ip);
    if (!family) return 'reserved';
    const embedded = family === 'ipv6' ? embeddedIpv4(ip) : null;
    if (this.allowed.check(ip, family) || (embedded && this.allowed.check(embedded, 'ipv4'))) return null;
    for (const [kind, list] of REFUSED) {
      if (list.check(ip, family) || (embedded && list.check(embedded, 'ipv4'))) return kind;
    }
    return null;
  }
}

/** Parses `a.b.c.d/n`, `x::y/n` or a bare address; throws with the entry named when it is not one. */
export function parseCidr(cidr: string): { address: string; prefix: number; family: Family } {
  const [rawAddress, rawPrefix, ...rest] = cidr.trim().split('/');
  const address = stripBrackets(rawAddress ?? '');
  const family = familyOf(address);
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = rawPrefix === undefined ? max : /^\d{1,3}$/.test(rawPrefix) ? Number(rawPrefix) : NaN;
  if (!family || rest.length > 0 || !(prefix >= 0 && prefix <= max)) {
    throw new Error(`"${cidr}" is not a CIDR (e.g. 10.1.0.0/16 or fd00:1::/64)`);
  }
  return { address, prefix, family };
}

/** Splits a comma-separated CIDR list (blank entries ignored); throws naming the first bad entry. */
export function parseCidrList(spec: string): string[] {
  const cidrs = spec
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  for (const c of cidrs) parseCidr(c);
  return cidrs;
}

function familyOf(ip: string): Family | null {
  const v = isIP(ip);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The IPv4 address an IPv6 one embeds by a translation scheme, if any. */
function embeddedIpv4(ip: string): string | null {
  const w = ipv6Words(ip);
  if (!w) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated); ::1 and :: are IPv6's own.
  if (zeros(0, 5) && (w[5] === 0xffff || (w[5] === 0 && (w[6] !== 0 || w[7] > 1)))) return v4(w[6], w[7]);
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6], w[7]);
  // 6to4: 2002:AABB:CCDD::/48 reaches AA.BB.CC.DD.
  if (w[0] === 0x2002) return v4(w[1], w[2]);
  return null;
}

/** The eight 16-bit words of an IPv6 address (zone id dropped), or null if it is not one. */
function ipv6Words(ip: string): number[] | null {
  let s = ip.split('%')[0].toLowerCase();
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const b = dotted.slice(1).map(Number);
    tail.push((b[0] << 8) | b[1], (b[2] << 8) | b[3]);
    const prefix = s.slice(0, dotted.index);
    if (!prefix.endsWith(':')) return null;
    s = prefix.endsWith('::') ? prefix : prefix.slice(0, -1);
  }
  const [head, rest] = s.split('::');
  const parse = (part: string | undefined) =>
    part
      ? part
          .split(':')
          .filter((x) => x !== '')
          .map((x) => parseInt(x, 16))
      : [];
  const left = parse(head);
  const right = [...parse(rest), ...tail];
  const fill = 8 - left.length - right.length;
  if (rest === undefined && fill !== 0) return null;
  const words = [...left, ...new Array(Math.max(fill, 0)).fill(0), ...right];
  return words.length === 8 && words.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff) ? words : null;
}
