import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { AdminValidationPipe } from './admin-validation.pipe';
import { UpdateOrgDto } from '../../orgs/update-org.dto';
import { isCurrencyCode } from './currency.validator';

describe('isCurrencyCode', () => {
  it('accepts ISO 4217 codes the runtime knows and refuses the rest', () => {
    expect(['USD', 'EUR', 'JPY', 'CHF'].every(isCurrencyCode)).toBe(true);
    expect(['usd', 'US', 'USDX', 'XYZ', '', 42, null].some(isCurrencyCode)).toBe(false);
  });

  it('a bad currency in PATCH /v1/orgs/:id is a 400 naming the field', async () => {
    const err = await new AdminValidationPipe()
      .transform({ currency: 'euro' }, { type: 'body', metatype: UpdateOrgDto })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ field: 'currency' });
  });
});
