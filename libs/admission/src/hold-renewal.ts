import { Logger } from '@nestjs/common';
import type { AdmissionClock } from './admission-clock';
import type { CallHold } from './call-admission.service';

/**
 * Keeps alive the holds of the calls this edge admitted in Redis (a reservation, concurrency
 * slots) while the edge lives: every ttl/3 their deadlines move to now + ttl, as the lease book
 * renews its leases. A call that runs longer than the TTL keeps its money held, so the sweep only
 * frees what a dead edge (or one whose event loop stalled past 2/3 of the TTL) will never settle.
 * A task's hold is not here: it is handed over, and its deadline is the task's (extendHold).
 */
export class HoldRenewal {
  private readonly logger = new Logger(HoldRenewal.name);
  private readonly held = new Set<CallHold>();
  /** Renewals started and not yet answered (for settled()). */
  private readonly running = new Set<Promise<void>>();
  private stopTimer: (() => void) | null = null;

  /**
   * @param extend pushes one hold's deadline to `until` (EXTEND_HOLD); false when any part of it
   *   (its reservation, a concurrency slot) was already swept
   */
  constructor(
    private readonly clock: AdmissionClock,
    private readonly ttlMs: number,
    private readonly extend: (hold: CallHold, until: number, now: number) => Promise<boolean>,
  ) {}

  start(): void {
    if (this.stopTimer) return;
    this.stopTimer = this.clock.every(Math.max(Math.floor(this.ttlMs / 3), 1), () => this.renewAll(this.clock.now()));
  }

  /** Stops renewing (the edge shuts down) and resolves once the renewals started are answered. */
  async stop(): Promise<void> {
    this.stopTimer?.();
    this.stopTimer = null;
    await this.settled();
  }

  /** Renews this hold until it completes or is handed over (forget). */
  track(hold: CallHold): void {
    this.held.add(hold);
  }

  forget(hold: CallHold): void {
    this.held.delete(hold);
  }

  /** Moves every tracked hold's deadline to now + ttl; resolves once Redis has answered. */
  renewAll(now: number): Promise<void> {
    if (this.held.size === 0) return Promise.resolve();
    const work = Promise.all([...this.held].map((hold) => this.renew(hold, now))).then(() => undefined);
    this.running.add(work);
    return work.finally(() => this.running.delete(work));
  }

  /** Resolves once the renewals started so far are answered. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async renew(hold: CallHold, now: number): Promise<void> {
    try {
      if ((await this.extend(hold, now + this.ttlMs, now)) || hold.completed) return;
      // Swept, whatever the hold's shape: this edge did not renew it in time. Its cost still
      // settles, without the reservation; a slot it held may already be another call's.
      this.held.delete(hold);
      hold.lapsed = true;
      this.logger.warn(
        `call ${hold.reservation.id}: its hold (reservation or concurrency slots) was swept before this edge renewed it (the edge stalled past its deadline, or Redis lost its data); what it costs is charged when it settles, beyond what was reserved`,
      );
    } catch (err) {
      this.logger.warn(
        `call ${hold.reservation.id}: hold not renewed (tried again in ${Math.floor(this.ttlMs / 3)} ms): ${(err as Error).message}`,
      );
    }
  }
}
