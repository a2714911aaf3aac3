import { describe, expect, it } from 'vitest';
import { isIanaTimeZone } from './time-zone';

describe('isIanaTimeZone', () => {
  it.each([
    'UTC',
    'Europe/Paris',
    'America/Argentina/Buenos_Aires',
    'Etc/UTC',
    'Etc/GMT+5',
    'Asia/Kolkata',
    'Asia/Calcutta',
  ])('should accept %s', (zone) => {
    expect(isIanaTimeZone(zone)).toBe(true);
  });

  it.each([
    'UTC+25',
    'UTC+5',
    'UTC-03:00',
    '+05:00',
    'GMT+1',
    'EST',
    'europe/paris',
    'Mars/Olympus',
    '',
    'Europe/Paris\u0000',
    'x'.repeat(65),
  ])('should refuse %j', (zone) => {
    expect(isIanaTimeZone(zone)).toBe(false);
  });

  it('should refuse what is not a string', () => {
    for (const v of [null, undefined, 1, {}, ['UTC']]) expect(isIanaTimeZone(v)).toBe(false);
  });
});
