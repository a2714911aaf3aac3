/**
 * Opens after `threshold` consecutive failures of the upstream, stays open for `openMs`, then lets
 * one trial call through (half-open): its success closes the circuit, its failure opens it again.
 * Only failures of the upstream itself are recorded as failures (see `breakerOutcomeOf`).
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(
    private readonly threshold = 5,
    private readonly openMs = 30_000,
  ) {}

  /** Milliseconds until a call may be tried, or 0 if it may go now. */
  blockedForMs(now = Date.now()): number {
    if (this.failures < this.threshold) return 0;
    if (now < this.openUntil) return this.openUntil - now;
    if (this.trialInFlight) return 1000;
    this.trialInFlight = true;
    return 0;
  }

  /** Whether calls fail fast right now (open, not yet half-open); no side effect, for metrics. */
  isOpen(now = Date.now()): boolean {
    return this.failures >= this.threshold && now < this.openUntil;
  }

  recordSuccess(): void {
    this.failures = 0;
    this.trialInFlight = false;
  }

  recordFailure(now = Date.now()): void {
    this.failures++;
    this.trialInFlight = false;
    if (this.failures >= this.threshold) this.openUntil = now + this.openMs;
  }

  /** A call that says nothing about the upstream's health (the caller hung up, our own failure): a trial may go again. */
  recordNeither(): void {
    this.trialInFlight = false;
  }
}
