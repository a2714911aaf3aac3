import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ThrottledAnswerHold } from './throttled-answer-hold';

const response = () => new EventEmitter() as unknown as ServerResponse;

describe('ThrottledAnswerHold', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('should answer after the hold, or when the window ends sooner', () => {
    const hold = new ThrottledAnswerHold({ holdMs: 1_000, maxHeld: 10, maxHeldPerKey: 10 });
    const answered: string[] = [];
    hold.answerLater('k', response(), 5_000, () => answered.push('long'));
    hold.answerLater('k', response(), 300, () => answered.push('short'));
    vi.advanceTimersByTime(299);
    expect(answered).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(answered).toEqual(['short']);
    vi.advanceTimersByTime(700);
    expect(answered).toEqual(['short', 'long']);
    expect(hold.heldCount).toBe(0);
  });

  it('should answer at once past the per-key and per-edge bounds, and free a slot when the client hangs up', () => {
    const hold = new ThrottledAnswerHold({ holdMs: 1_000, maxHeld: 3, maxHeldPerKey: 2 });
    const answered: string[] = [];
    const first = response();
    hold.answerLater('a', first, 5_000, () => answered.push('a1'));
    hold.answerLater('a', response(), 5_000, () => answered.push('a2'));
    hold.answerLater('a', response(), 5_000, () => answered.push('a3'));
    // A third of key a: over its bound, answered at once; another key still has room.
    expect(answered).toEqual(['a3']);
    hold.answerLater('b', response(), 5_000, () => answered.push('b1'));
    hold.answerLater('c', response(), 5_000, () => answered.push('c1'));
    // The edge holds 3: c is answered at once.
    expect(answered).toEqual(['a3', 'c1']);
    // a1's client hangs up: never answered, its slot freed.
    first.emit('close');
    expect(hold.heldCount).toBe(2);
    hold.answerLater('a', response(), 5_000, () => answered.push('a4'));
    expect(answered).toEqual(['a3', 'c1']);
    vi.advanceTimersByTime(1_000);
    expect(answered.sort()).toEqual(['a2', 'a3', 'a4', 'b1', 'c1']);
  });
});
