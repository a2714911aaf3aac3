import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { PutBudgetDto } from '../../budgets/put-budget.dto';
import { CreateOrgDto } from '../../orgs/create-org.dto';
import { PutPolicyDto } from '../../policies/put-policy.dto';
import { CreatePriceRuleDto } from '../../prices/create-price-rule.dto';
import { RegisterUpstreamDto } from '../../upstreams/register-upstream.dto';
import { AdminValidationPipe, findRefusedNull } from './admin-validation.pipe';
import { FieldValidationException } from '../errors/field-validation.exception';

describe('findRefusedNull', () => {
  it.each([
    [CreateOrgDto, { name: 'a', slug: 'ab', timeZone: null }, 'timeZone'],
    [CreateOrgDto, { name: 'a', slug: 'ab', autoApproveTools: null }, 'autoApproveTools'],
    [CreatePriceRuleDto, { perCallMicros: 1, perOutputTokenMicros: null }, 'perOutputTokenMicros'],
    [PutBudgetDto, { scope: 'ORG', period: 'DAY', limitMicros: 1, alertThresholds: null }, 'alertThresholds'],
    [CreateOrgDto, { name: null, slug: 'ab' }, 'name'],
  ] as const)('should name the field of an explicit null the schema does not allow (%#)', (dto, body, field) => {
    expect(findRefusedNull(body, dto)).toBe(field);
  });

  it('should look into nested DTOs', () => {
    expect(findRefusedNull({ namespace: 'x', transport: 'SSE', oauth: { scope: null } }, RegisterUpstreamDto)).toBe(
      'oauth.scope',
    );
  });

  it('should let null through where the schema says nullable (null means none)', () => {
    expect(
      findRefusedNull(
        { allow: [], deny: [], disclosureMode: null, maxAnswerTokens: null, autoExecute: null, outputOverflow: null },
        PutPolicyDto,
      ),
    ).toBeNull();
  });

  it('should leave undeclared properties to the whitelist check', () => {
    expect(findRefusedNull({ name: 'a', slug: 'ab', extra: null }, CreateOrgDto)).toBeNull();
  });
});

describe('AdminValidationPipe', () => {
  const pipe = new AdminValidationPipe();

  it('should refuse an explicit null with a 400 naming the field', async () => {
    const err = await pipe
      .transform({ name: 'a', slug: 'ab', timeZone: null }, { type: 'body', metatype: CreateOrgDto })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FieldValidationException);
    expect(err).toMatchObject({
      field: 'timeZone',
      messages: ['timeZone must not be null; omit it to leave it unset'],
    });
  });

  it('should refuse a time zone given as an offset', async () => {
    const err = await pipe
      .transform({ name: 'a', slug: 'ab', timeZone: 'UTC+25' }, { type: 'body', metatype: CreateOrgDto })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ field: 'timeZone' });
  });

  it('should refuse a path parameter holding a NUL byte, naming it', async () => {
    const err = await pipe
      .transform('abc\u0000', { type: 'param', data: 'scope', metatype: String })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ field: 'scope' });
  });
});
