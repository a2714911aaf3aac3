import type { AdmissionClock } from '@tollgate/admission';

interface Timer {
  ms: number;
  due: number;
  fn: () => void;
}

/**
 * The model's clock for admission (AdmissionSettings.clock): time moves only when the model says,
 * and the lease book's timers (renewals, idle returns) fire at their due times on the way, each
 * followed by the work it started, so a run is the same every time.
 */
export class VirtualClock implements AdmissionClock {
  private t: number;
  private readonly timers = new Set<Timer>();

  constructor(now: number) {
    this.t = now;
  }

  now(): number {
    return this.t;
  }

  every(ms: number, fn: () => void): () => void {
    const timer = { ms, due: this.t + ms, fn };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  /** Moves to `now`, firing every timer due on the way in order, each at its time, `settled` awaited after each. */
  async advanceTo(now: number, settled: () => Promise<void>): Promise<void> {
    for (;;) {
      let next: Timer | null = null;
      for (const timer of this.timers) if (timer.due <= now && (!next || timer.due < next.due)) next = timer;
      if (!next) break;
      this.t = Math.max(this.t, next.due);
      next.due += next.ms;
      next.fn();
      await settled();
    }
    this.t = Math.max(this.t, now);
  }

  /**
   * Moves to `now` firing nothing, as a stalled event loop: the timers due meanwhile fire late, at
   * the next advanceTo.
   */
  jump(now: number): void {
    this.t = Math.max(this.t, now);
  }

  /** Starts over at `now` (a new sequence's start, which may be earlier): timers next fire a period from it. */
  reset(now: number): void {
    this.t = now;
    for (const timer of this.timers) timer.due = now + timer.ms;
  }
}
