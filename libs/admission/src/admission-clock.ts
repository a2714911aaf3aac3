import type { Clock } from '@tollgate/kernel';

/**
 * Admission's time: what the lease book reads as now and runs its renewals and idle returns on.
 * Production runs on the system clock; the money model (tools/money-model) passes a virtual one,
 * so leases, their sweep and windows run through the same code at the times it chooses.
 */
export interface AdmissionClock extends Clock {
  /**
   * Runs `fn` every `ms` from now on; the function returned stops it. A clock a test moves also
   * runs it when moved, and awaits what it returns (TestClock.elapse).
   */
  every(ms: number, fn: () => unknown): () => void;
}

export const SYSTEM_CLOCK: AdmissionClock = {
  now: () => Date.now(),
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
