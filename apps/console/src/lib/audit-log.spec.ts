import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../api/oversight-types';
import { auditCsv, fieldLabel, formatChangeValue } from './audit-log';

const EVENT: AuditEvent = {
  id: 'e1',
  orgId: 'o1',
  actorId: 't1',
  actor: {
    tokenId: 't1',
    tokenName: 'ops',
    tokenPrefix: 'tga_x',
    role: 'ORG_ADMIN',
    user: { id: 'u1', name: 'Ada', email: 'ada@acme.test' },
    ownerLabel: null,
  },
  action: 'budget.updated',
  targetType: 'budget',
  targetId: 'b1',
  targetName: 'team web, monthly',
  changes: [
    { field: 'limitMicros', before: 10_000_000, after: 12_500_001 },
    { field: 'alertThresholds', before: [80], after: [50, 80] },
  ],
  details: {},
  createdAt: '2026-11-25T23:30:00.000Z',
};

describe('audit log as a change log', () => {
  it('should show money in the org currency exactly and other values readably', () => {
    expect(fieldLabel('perOutputTokenMicros')).toBe('per output token');
    expect(formatChangeValue('limitMicros', 12_500_001, 'EUR')).toMatch(/12\.500001/);
    expect(formatChangeValue('limitMicros', '9007199254740993', 'USD')).toMatch(/9,007,199,254\.740993/);
    expect(formatChangeValue('tags', [], 'USD')).toBe('(none)');
    expect(formatChangeValue('name', null, 'USD')).toBe('—');
    expect(formatChangeValue('name', undefined, 'USD')).toBe('not recorded');
  });

  it('should export one CSV line per changed field with exact money, both times and the currency', () => {
    const csv = auditCsv([EVENT], 'Europe/Paris', 'EUR', () => '2026-11-26 00:30');
    expect(csv.rows).toEqual([
      [
        'e1',
        '2026-11-25T23:30:00.000Z',
        '2026-11-26 00:30',
        'Ada',
        'ada@acme.test',
        'ops',
        'ORG_ADMIN',
        'budget.updated',
        'budget',
        'b1',
        'team web, monthly',
        'limitMicros',
        '10.00',
        '12.500001',
        'EUR',
      ],
      expect.arrayContaining(['alertThresholds', '80', '50; 80', '']),
    ]);
    expect(auditCsv([{ ...EVENT, changes: [] }], 'UTC', 'EUR', (t) => t).rows).toHaveLength(1);
  });
});
