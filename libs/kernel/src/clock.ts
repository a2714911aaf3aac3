/**
 * What the apps read as now where a rule turns on the time (a key's expiry, a rate-limit window).
 * Production runs on the system clock; tests pass one they move forward instead of waiting
 * (`TestClock` in @tollgate/testing). Injected as `CLOCK` (ConfigModule provides it).
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const CLOCK = Symbol('CLOCK');
