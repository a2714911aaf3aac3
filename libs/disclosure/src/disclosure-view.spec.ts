import { describe, expect, it } from 'vitest';
import { answerTokenCeiling, listedToolEntry, requestedDisclosureMode, resolveAutoMode } from './disclosure-view';

describe('disclosure view rules', () => {
  it('should take the key’s mode first, then the most specific policy’s, then AUTO', () => {
    const levels = [
      { scope: 'ORG' as const, disclosureMode: 'FULL' as const },
      { scope: 'TEAM' as const, disclosureMode: 'PROGRESSIVE' as const },
      { scope: 'USER' as const, disclosureMode: null },
    ];
    expect(requestedDisclosureMode('CODE', levels)).toBe('CODE');
    expect(requestedDisclosureMode(null, levels)).toBe('PROGRESSIVE');
    expect(requestedDisclosureMode(null, [])).toBe('AUTO');
  });

  it('should serve AUTO in full only when the plain list is small', () => {
    expect(resolveAutoMode('AUTO', 4_000)).toBe('FULL');
    expect(resolveAutoMode('AUTO', 4_001)).toBe('PROGRESSIVE');
    expect(resolveAutoMode('FULL', 100_000)).toBe('FULL');
  });

  it('should take the smallest answer ceiling of the levels', () => {
    expect(
      answerTokenCeiling([
        { scope: 'ORG', disclosureMode: null, maxAnswerTokens: 900 },
        { scope: 'KEY', disclosureMode: null, maxAnswerTokens: 600 },
      ]),
    ).toBe(600);
    expect(answerTokenCeiling([{ scope: 'ORG', disclosureMode: null, maxAnswerTokens: null }])).toBeUndefined();
  });

  it('should list a tool under its exposed name with its price in _meta', () => {
    const entry = listedToolEntry({ name: 'echo', inputSchema: { type: 'object' } }, 'fx__echo', {
      perCallMicros: 2_000n,
      perOutputTokenMicros: 0n,
      acceptReportedCost: false,
      reportedCostCapMicros: 5n,
    });
    expect(entry).toEqual({
      name: 'fx__echo',
      inputSchema: { type: 'object' },
      _meta: { 'tollgate/price': { perCallMicros: 2_000, perOutputTokenMicros: 0, reportedCostCapMicros: 0 } },
    });
  });
});
