import type { UsageEvent } from './usage-event';

/** A complete usage event for the specs: money beyond 2^53, a trace and a price rule; override what a test varies. */
export function sampleUsageEvent(overrides: Partial<UsageEvent> = {}): UsageEvent {
  return {
    id: 'call-1',
    orgId: '00000000-0000-4000-8000-000000000001',
    teamId: '00000000-0000-4000-8000-000000000002',
    userId: '00000000-0000-4000-8000-000000000003',
    keyId: '00000000-0000-4000-8000-000000000004',
    upstreamId: '00000000-0000-4000-8000-000000000005',
    toolName: 'echo',
    outcome: 'OK',
    costMicros: 9_007_199_254_740_993n,
    inputTokens: 0,
    outputTokens: 12,
    latencyMs: 3,
    priceRuleId: '00000000-0000-4000-8000-000000000006',
    occurredAt: new Date('2026-11-22T10:00:00.123Z'),
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    ...overrides,
  };
}
