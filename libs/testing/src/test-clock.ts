import type { Clock } from '@tollgate/kernel';

/**
 * A clock a test moves instead of waiting: it runs with the system clock, moved forward by what
 * `advance` added, until `freeze` stops it; a frozen clock moves only when advanced. Given to an
 * app (startPlatform's `clock`), it is what that app reads as now (kernel CLOCK), so a key's
 * expiry or a rate-limit window passes in no time, at the millisecond the test names. Intervals
 * (`every`) run on real time, and at once when the test moves the clock with `elapse`.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;
  private readonly periodic = new Set<() => unknown>();

  now(): number {
    return this.frozenAt ?? Date.now() + this.offsetMs;
  }

  /** Stops the clock at `at` (default: now). */
  freeze(at = this.now()): void {
    this.frozenAt = at;
  }

  /** Lets a frozen clock run again from where it stands (it never goes back). */
  resume(): void {
    if (this.frozenAt === null) return;
    this.offsetMs = this.frozenAt - Date.now();
    this.frozenAt = null;
  }

  advance(ms: number): void {
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offsetMs += ms;
  }

  /**
   * As admission's clock (AdmissionClock) runs its renewals, and the edge its task expiry sweep: on
   * real time, and at once when the test moves the clock with `elapse`.
   */
  every(ms: number, fn: () => unknown): () => void {
    const timer = setInterval(fn, ms);
    timer.unref();
    const periodic = () => fn();
    this.periodic.add(periodic);
    return () => {
      clearInterval(timer);
      this.periodic.delete(periodic);
    };
  }

  /**
   * Moves the clock `ms` forward and runs what runs periodically on it (`every`) once each, as if
   * its time came, resolving when all of it is done: a test awaits this event, not a timer.
   */
  async elapse(ms: number): Promise<void> {
    this.advance(ms);
    await Promise.all([...this.periodic].map((run) => run()));
  }
}
