import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * Property-based fuzz of every write route (POST, PUT, PATCH, DELETE) of the admin API's served
 * OpenAPI document: bodies are built from each route's schema, then mutated with hostile values
 * (NUL, lone surrogates, nulls, wrong types, huge numbers, deep nesting, giant strings, extra
 * fields, missing fields) and sent with real ids (or hostile ones) in the path. No answer may be a
 * 5xx, and the process must still answer afterwards. Reading the served document means routes
 * added later are fuzzed without touching this file.
 */

/** Requests in the whole run, spread evenly over the write routes. */
const TOTAL_CASES = 3000;
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'] as const;

type Schema = {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  enum?: unknown[];
  format?: string;
  example?: unknown;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  pattern?: string;
};

interface Operation {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

interface Route {
  method: (typeof WRITE_METHODS)[number];
  template: string;
  pathParams: { name: string; schema: Schema }[];
  body: Schema | null;
}

interface FuzzCase {
  params: Record<string, string>;
  /** The body as sent: JSON text (with deep-nesting markers expanded), or undefined for none. */
  body: string | undefined;
  contentType: string | undefined;
  requestId: string | undefined;
}

// A marker replaced, after JSON.stringify, by arrays nested this deep (stringify itself would recurse).
const DEEP_MARKER = (levels: number) => `@@deep:${levels}@@`;
const expandDeep = (text: string) =>
  text.replace(/"@@deep:(\d+)@@"/g, (_, n: string) => `${'['.repeat(Number(n))}${']'.repeat(Number(n))}`);

const hostileString = fc.oneof(
  fc.string({ maxLength: 10 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom(
    '\u0000',
    '\ud800',
    'a\udc00b',
    'x\ud83d',
    '\udfff\ud800',
    '%00',
    '\\u0000',
    'UTC+25',
    '../../etc/passwd',
    '<script>',
    "'; DROP TABLE x;--",
  ),
  fc.constantFrom('x'.repeat(200_000), '😀'.repeat(50_000)),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 4, arbitrary: hostileString },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      1e308,
      -1e308,
      2 ** 64,
      Number.MAX_SAFE_INTEGER + 2,
      -1,
      0.5,
      -0,
      1e-300,
      2 ** 31,
      -(2 ** 31) - 1,
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(true, false, 0, '', '0', 'true', [], {}, [null], { a: null }, ['\u0000'], {
      '\u0000': 1,
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom(DEEP_MARKER(40), DEEP_MARKER(1_000), DEEP_MARKER(100_000)) },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 3, withNullPrototype: false }) },
);

const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '\u0000', '\ud800', '', 'a.b', '$where'),
  fc.string({ maxLength: 12 }),
);

const hostilePathParam = fc.constantFrom(
  'not-a-uuid',
  '%00',
  'a%00b',
  '%E0%A4%A',
  '%ED%A0%80',
  '%F0%9F%98%80',
  'a'.repeat(5_000),
  '..%2F..',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '6f1c7a52-4f0e-4a8e-9d57-1b1f0f7d8e21',
  '1e308',
  '-1',
  'null',
);

describe('admin API fuzz over the served OpenAPI document', () => {
  let p: RunningPlatform;
  let spec: {
    paths: Record<string, Partial<Record<string, Operation>>>;
    components: { schemas: Record<string, Schema> };
  };
  const ids: Record<string, string> = {};

  const resolve = (schema: Schema): Schema => {
    if (schema.$ref) return resolve(spec.components.schemas[schema.$ref.replace('#/components/schemas/', '')]);
    if (schema.allOf?.length === 1) return resolve(schema.allOf[0]);
    return schema;
  };

  /** A plausible value for a property: the schema's enum or example, a real id for a uuid, else a typed value. */
  const validValue = (name: string, raw: Schema, depth = 0): fc.Arbitrary<unknown> => {
    const schema = resolve(raw);
    if (schema.enum?.length) return fc.constantFrom(...schema.enum);
    switch (schema.type) {
      case 'string': {
        if (schema.format === 'uuid' || /Id$/.test(name)) return fc.constantFrom(...Object.values(ids));
        if (/email/i.test(name)) return fc.uuid().map((u) => `u-${u.slice(0, 8)}@fuzz.test`);
        if (/url/i.test(name)) return fc.constant('http://127.0.0.1:9/hook');
        if (/At$|From$/.test(name)) return fc.constant('2031-01-01T00:00:00Z');
        const words = fc.stringMatching(/^[a-z][a-z0-9]{1,12}$/);
        return schema.example !== undefined ? fc.oneof(fc.constant(schema.example), words) : words;
      }
      case 'integer':
      case 'number':
        return fc.integer({
          min: Math.max(schema.minimum ?? 0, 0),
          max: Math.min(schema.maximum ?? 1_000_000, 1_000_000),
        });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(schema.items ? validValue(name, schema.items, depth + 1) : fc.string(), { maxLength: 3 });
      default:
        if (schema.properties && depth < 3) return validObject(schema, depth + 1);
        if (schema.additionalProperties)
          return fc.dictionary(fc.stringMatching(/^X-[A-Za-z]{1,8}$/), fc.string({ maxLength: 10 }), { maxKeys: 2 });
        return schema.example !== undefined ? fc.constant(schema.example) : fc.string({ maxLength: 10 });
    }
  };

  const validObject = (schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> => {
    const props = schema.properties ?? {};
    const arbs = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validValue(k, s, depth)]));
    return fc.record(arbs, { requiredKeys: (schema.required ?? []).filter((k) => k in props) }) as fc.Arbitrary<
      Record<string, unknown>
    >;
  };

  /** A body for a route: valid, or valid with one hostile change, or hostile as a whole. */
  const bodyArb = (route: Route): fc.Arbitrary<string | undefined> => {
    const schema = route.body ? resolve(route.body) : { type: 'object', properties: {} };
    const base = validObject(schema);
    const names = Object.keys(schema.properties ?? {});
    const arrays = names.filter((n) => resolve(schema.properties![n]).type === 'array');
    const nested = names.filter((n) => resolve(schema.properties![n]).properties);
    const json = (v: unknown) => expandDeep(JSON.stringify(v));
    const options: fc.WeightedArbitrary<string | undefined>[] = [
      { weight: 2, arbitrary: base.map(json) },
      { weight: 2, arbitrary: fc.tuple(base, hostileKey, hostileValue).map(([b, k, v]) => json({ ...b, [k]: v })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<string | undefined>(
          undefined,
          '',
          'null',
          '[]',
          '"text"',
          '42',
          '{',
          '{"a":',
          '\u0000',
          '{"a":1}garbage',
          `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
        ),
      },
    ];
    if (names.length > 0) {
      options.push({
        weight: 8,
        arbitrary: fc.tuple(base, fc.constantFrom(...names), hostileValue).map(([b, k, v]) => json({ ...b, [k]: v })),
      });
      options.push({
        weight: 1,
        arbitrary: fc.tuple(base, fc.constantFrom(...names)).map(([b, k]) => json({ ...b, [k]: undefined })),
      });
    }
    if (arrays.length > 0) {
      options.push({
        weight: 2,
        arbitrary: fc
          .tuple(base, fc.constantFrom(...arrays), hostileValue)
          .map(([b, k, v]) => json({ ...b, [k]: [...((b[k] as unknown[]) ?? []), v] })),
      });
    }
    if (nested.length > 0) {
      options.push({
        weight: 2,
        arbitrary: fc
          .tuple(base, fc.constantFrom(...nested), hostileKey, hostileValue)
          .map(([b, k, hk, v]) => json({ ...b, [k]: { ...((b[k] as object) ?? {}), [hk]: v } })),
      });
    }
    return fc.oneof(...options);
  };

  const paramArb = (param: { name: string; schema: Schema }): fc.Arbitrary<string> => {
    const schema = resolve(param.schema);
    const valid = schema.enum?.length
      ? fc.constantFrom(...schema.enum.map(String))
      : fc.constant(ids[param.name] ?? (param.name === 'scopeId' ? ids.orgId : '6f1c7a52-4f0e-4a8e-9d57-1b1f0f7d8e21'));
    return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: hostilePathParam });
  };

  const caseArb = (route: Route): fc.Arbitrary<FuzzCase> =>
    fc.record({
      params: fc.record(Object.fromEntries(route.pathParams.map((pp) => [pp.name, paramArb(pp)]))) as fc.Arbitrary<
        Record<string, string>
      >,
      body: bodyArb(route),
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            undefined,
            'text/plain',
            'application/json; charset=latin1',
            'application/x-www-form-urlencoded',
            'application/json; charset=utf-16',
          ),
        },
      ),
      requestId: fc.oneof(
        { weight: 10, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('x'.repeat(8_000), 'a b "c"', '', '\t') },
      ),
    });

  beforeAll(async () => {
    // With a public URL per-user OAuth is configured, so a connect request is judged on its input, not
    // refused as unset (503). The upstream and webhook point at a closed local port: the worker's
    // syncs and deliveries fail at once instead of waiting on the network when the platform stops.
    p = await startPlatform({ ADMIN_PUBLIC_URL: 'http://127.0.0.1:9/admin', OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    spec = (await (await fetch(`${p.adminUrl}/docs-json`)).json()) as typeof spec;
    const ok = <T>(res: { status: number; body: T }, what: string): T => {
      if (res.status >= 300) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    // Real ids for every path parameter, so the fuzz gets past the 404s to the bodies.
    ids.orgId = ok(await p.admin('POST', '/v1/orgs', { name: 'Fuzzco', slug: 'fuzzco' }), 'org').id;
    const org = `/v1/orgs/${ids.orgId}`;
    ids.teamId = ok(await p.admin('POST', `${org}/teams`, { name: 'fuzzers' }), 'team').id;
    ids.userId = ok(await p.admin('POST', `${org}/users`, { email: 'fuzz@fuzz.test' }), 'user').id;
    ok(
      await p.admin('POST', `${org}/teams/${ids.teamId}/members`, { userId: ids.userId, isTeamAdmin: true }),
      'member',
    );
    ids.keyId = ok(
      await p.admin('POST', `${org}/keys`, { teamId: ids.teamId, userId: ids.userId, name: 'fuzz' }),
      'key',
    ).key.id;
    ids.budgetId = ok(
      await p.admin('PUT', `${org}/budgets`, {
        scope: 'ORG',
        scopeId: ids.orgId,
        period: 'MONTH',
        limitMicros: 1_000_000,
      }),
      'budget',
    ).id;
    ids.rateLimitId = ok(
      await p.admin('POST', `${org}/rate-limits`, { scope: 'ORG', scopeId: ids.orgId, callsPerWindow: 100 }),
      'rate limit',
    ).id;
    // Should these be refused, a random id still reaches the body checks.
    const upstream = await p.admin('POST', `${org}/upstreams`, {
      namespace: 'fuzz',
      transport: 'STREAMABLE_HTTP',
      url: 'http://127.0.0.1:9/mcp',
    });
    ids.upstreamId = upstream.status < 300 ? upstream.body.id : '7d0e1f2a-3b4c-4d5e-8f60-718293a4b5c6';
    const webhook = await p.admin('POST', `${org}/alert-webhooks`, { url: 'http://127.0.0.1:9/hook' });
    ids.webhookId = webhook.status < 300 ? webhook.body.id : '8e1f2a3b-4c5d-4e6f-9071-8293a4b5c6d7';
    console.log(`admin API fuzz fixtures: upstream ${upstream.status}, alert webhook ${webhook.status}`);
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should answer every hostile write request with less than 500 and keep answering', async () => {
    const routes: Route[] = Object.entries(spec.paths).flatMap(([template, ops]) =>
      WRITE_METHODS.filter((m) => ops[m]).map((method) => {
        const op = ops[method] as Operation;
        return {
          method,
          template,
          pathParams: (op.parameters ?? [])
            .filter((x) => x.in === 'path')
            .map((x) => ({ name: x.name, schema: x.schema ?? { type: 'string' } })),
          body: op.requestBody?.content?.['application/json']?.schema ?? null,
        };
      }),
    );
    expect(routes.length).toBeGreaterThan(20);
    const runsPerRoute = Math.ceil(TOTAL_CASES / routes.length);
    const byClass: Record<string, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
    const byStatus: Record<number, number> = {};
    const failures: string[] = [];
    let requests = 0;

    const send = async (route: Route, c: FuzzCase): Promise<number> => {
      const path = route.template.replace(/\{(\w+)\}/g, (_, name: string) => c.params[name]);
      const headers: Record<string, string> = { Authorization: `Bearer ${p.adminToken}` };
      if (c.contentType && c.body !== undefined) headers['Content-Type'] = c.contentType;
      if (c.requestId !== undefined) headers['X-Request-Id'] = c.requestId;
      const res = await fetch(`${p.adminUrl}${path}`, { method: route.method.toUpperCase(), headers, body: c.body });
      const text = await res.text();
      requests++;
      byClass[`${Math.floor(res.status / 100)}xx`] = (byClass[`${Math.floor(res.status / 100)}xx`] ?? 0) + 1;
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
      if (res.status >= 500) {
        failures.push(
          `${route.method.toUpperCase()} ${path.slice(0, 200)} ${res.status} body=${(c.body ?? '').slice(0, 200)} answer=${text.slice(0, 200)}`,
        );
      }
      return res.status;
    };

    const started = Date.now();
    for (const route of routes) {
      // One property per route; a 5xx is recorded and the run goes on, so the log lists every one.
      await fc.assert(
        fc.asyncProperty(caseArb(route), async (c) => {
          await send(route, c);
          return true;
        }),
        { numRuns: runsPerRoute },
      );
    }
    const health = await fetch(`${p.adminUrl}/healthz`);
    const ready = await fetch(`${p.adminUrl}/readyz`);

    console.log(
      `admin API fuzz: ${requests} requests over ${routes.length} write routes in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `by class ${JSON.stringify(byClass)}; by status ${JSON.stringify(byStatus)}`,
    );
    expect(failures).toEqual([]);
    expect(byClass['5xx']).toBe(0);
    expect(health.status).toBe(200);
    expect(ready.status).toBe(200);
  }, 240_000);
});
