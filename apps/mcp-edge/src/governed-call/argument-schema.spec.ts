import { describe, expect, it } from 'vitest';
import { checkArgumentSchema } from './argument-schema';

const SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1 },
    limit: { type: 'integer', maximum: 50 },
    filter: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } },
  },
  required: ['query'],
};

describe('checkArgumentSchema', () => {
  it('should accept arguments that fit the pinned schema', () => {
    expect(checkArgumentSchema('h1', SCHEMA, { query: 'x', limit: 3 })).toBeNull();
  });

  it('should name a parameter the approved definition does not have when a pending revision adds it', () => {
    expect(checkArgumentSchema('h1', SCHEMA, { query: 'x', region: 'eu' })).toEqual({
      parameter: 'region',
      problem: 'is not a parameter of the approved definition',
      notInApprovedDefinition: true,
    });
  });

  it('should name a missing required parameter', () => {
    expect(checkArgumentSchema('h1', SCHEMA, {})).toMatchObject({ parameter: 'query', problem: 'is required' });
    expect(checkArgumentSchema('h1', SCHEMA, undefined)).toMatchObject({ parameter: 'query' });
  });

  it('should name a nested parameter of the wrong type', () => {
    expect(checkArgumentSchema('h1', SCHEMA, { query: 'x', filter: { tags: ['a', 2] } })).toMatchObject({
      parameter: 'filter.tags[1]',
      problem: 'must be string',
    });
    expect(checkArgumentSchema('h1', SCHEMA, { query: 'x', limit: 99 })).toMatchObject({ parameter: 'limit' });
  });

  it('should let other parameters in when the schema allows them', () => {
    expect(
      checkArgumentSchema(
        'h2',
        { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
        { a: 'x', b: 1 },
      ),
    ).toBeNull();
    expect(checkArgumentSchema('h3', { type: 'object' }, { anything: 1 })).toBeNull();
  });

  it('should still refuse unnamed parameters when the schema cannot be compiled', () => {
    const broken = { type: 'object', properties: { a: { $ref: '#/nowhere' } } };
    expect(checkArgumentSchema('h4', broken, { a: 1 })).toBeNull();
    expect(checkArgumentSchema('h4', broken, { b: 1 })).toMatchObject({
      parameter: 'b',
      notInApprovedDefinition: true,
    });
  });
});
