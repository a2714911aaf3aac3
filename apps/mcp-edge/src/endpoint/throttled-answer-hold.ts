import type { ServerResponse } from 'node:http';

export const THROTTLED_ANSWER_HOLD = {
  /** How long a throttled key's answer waits (at most until its window ends). */
  holdMs: 1_000,
  /** Answers held at once on this edge; past it, answered at once. */
  maxHeld: 256,
  /** Answers of one key held at once; past it, answered at once. */
  maxHeldPerKey: 8,
};

/**
 * Holds the 429 of a key past its allowance of refused input for a second before sending it. The
 * answer costs the edge next to nothing either way; what costs is the rate: a client that sends
 * again the moment it is answered (an attacker's loop) would otherwise make the edge accept a
 * connection, take in up to a socket buffer of body and tear the connection down hundreds of times
 * a second. Held, each of its connections makes one request a second, and while the body is not
 * read TCP flow control stops the sender. Bounded per key and per edge, so holding cannot itself
 * run the edge out of sockets; a held connection whose client hangs up is let go.
 */
export class ThrottledAnswerHold {
  private held = 0;
  private readonly heldPerKey = new Map<string, number>();

  constructor(private readonly limits = THROTTLED_ANSWER_HOLD) {}

  /** Sends `answer` after the hold (or at once when enough answers are already held). */
  answerLater(keyId: string, res: ServerResponse, blockedMs: number, answer: () => void): void {
    const ofKey = this.heldPerKey.get(keyId) ?? 0;
    if (this.held >= this.limits.maxHeld || ofKey >= this.limits.maxHeldPerKey) return answer();
    this.held++;
    this.heldPerKey.set(keyId, ofKey + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      res.off('close', release);
      this.held--;
      const left = (this.heldPerKey.get(keyId) ?? 1) - 1;
      if (left > 0) this.heldPerKey.set(keyId, left);
      else this.heldPerKey.delete(keyId);
    };
    const timer = setTimeout(
      () => {
        release();
        answer();
      },
      Math.min(this.limits.holdMs, blockedMs),
    );
    res.once('close', release);
  }

  /** Answers held now (for tests and metrics). */
  get heldCount(): number {
    return this.held;
  }
}
