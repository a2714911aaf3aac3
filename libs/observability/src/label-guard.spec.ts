import { describe, expect, it } from 'vitest';
import { LabelGuard } from './label-guard';

describe('LabelGuard', () => {
  it('keeps the first values up to the cap and reports later ones as other', () => {
    const guard = new LabelGuard(2);
    expect([guard.value('a'), guard.value('b'), guard.value('c'), guard.value('a')]).toEqual(['a', 'b', 'other', 'a']);
  });
});
