import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { PutBudgetDto } from '../../budgets/put-budget.dto';
import { CreatePriceRuleDto } from '../../prices/create-price-rule.dto';
import { RegisterUpstreamDto } from '../../upstreams/register-upstream.dto';
import { validationExceptionFactory } from './validation-exception.factory';

async function check<T extends object>(cls: new () => T, body: Record<string, unknown>) {
  const errors = await validate(plainToInstance(cls, body), { whitelist: true, forbidNonWhitelisted: true });
  return errors.length === 0 ? null : validationExceptionFactory(errors);
}

describe('money fields', () => {
  it('should accept a whole, non-negative number of micro-units', async () => {
    expect(
      await check(CreatePriceRuleDto, {
        perCallMicros: 2000,
        perOutputTokenMicros: 0,
        reportedCostCapMicros: 9_007_199_254_740_991,
      }),
    ).toBeNull();
  });

  it.each([
    ['a fraction', 1.5],
    ['a negative amount', -1],
    ['a numeric string', '2000'],
    ['an integer beyond 2^53', 2 ** 53 + 2],
    ['null', null],
  ])('should name perCallMicros when it is %s', async (_label, value) => {
    const err = await check(CreatePriceRuleDto, { perCallMicros: value });
    expect(err?.field).toBe('perCallMicros');
    expect(err?.messages.join(' ')).toContain('micro-units');
  });

  it('should name the optional money field that holds a fraction', async () => {
    expect((await check(CreatePriceRuleDto, { perCallMicros: 1, perOutputTokenMicros: 0.25 }))?.field).toBe(
      'perOutputTokenMicros',
    );
    expect((await check(CreatePriceRuleDto, { perCallMicros: 1, reportedCostCapMicros: 3.3 }))?.field).toBe(
      'reportedCostCapMicros',
    );
  });

  it('should name limitMicros when a budget limit is fractional', async () => {
    const err = await check(PutBudgetDto, {
      scope: 'ORG',
      scopeId: '6f1c7a52-4f0e-4a8e-9d57-1b1f0f7d8e21',
      period: 'MONTH',
      limitMicros: 10.5,
    });
    expect(err?.field).toBe('limitMicros');
  });
});

describe('validation errors', () => {
  it('should use the first failing property as field and list every message when several fail', async () => {
    const err = await check(PutBudgetDto, { scope: 'PLANET', scopeId: 'x', period: 'MONTH', limitMicros: -1 });
    expect(err?.field).toBe('scope');
    expect(err?.messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining('scope'),
        expect.stringContaining('scopeId'),
        expect.stringContaining('limitMicros'),
      ]),
    );
  });

  it('should name a bad upstream namespace', async () => {
    const err = await check(RegisterUpstreamDto, {
      namespace: 'Bad_Name',
      transport: 'SSE',
      url: 'http://127.0.0.1:9000/sse',
    });
    expect(err?.field).toBe('namespace');
  });

  it('should accept a local http URL and refuse a sync interval under a minute', async () => {
    expect(
      await check(RegisterUpstreamDto, {
        namespace: 'local-docs',
        transport: 'STREAMABLE_HTTP',
        url: 'http://localhost:3000/mcp',
      }),
    ).toBeNull();
    const err = await check(RegisterUpstreamDto, {
      namespace: 'docs',
      transport: 'STREAMABLE_HTTP',
      url: 'http://localhost:3000/mcp',
      syncIntervalSeconds: 30,
    });
    expect(err?.field).toBe('syncIntervalSeconds');
  });

  it('should name headers that are not a map of strings', async () => {
    const err = await check(RegisterUpstreamDto, {
      namespace: 'docs',
      transport: 'SSE',
      url: 'https://x.example/sse',
      headers: { 'X-Key': 42 },
    });
    expect(err?.field).toBe('headers');
  });
});
