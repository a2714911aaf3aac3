import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceServer, startConformanceServer } from '../fixtures/conformance-server';
import { runConformance } from './run-conformance';

// The fixture is the upstream the edge's own conformance run will sit in front of: it must pass
// the suite on its own first, for both revisions, or an edge failure could be the fixture's.
describe('MCP conformance suite against the project’s conformance fixture server', () => {
  let fixture: ConformanceServer;

  beforeAll(async () => {
    fixture = await startConformanceServer();
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it.each([
    ['2025-11-25', 30],
    ['2026-07-28', 37],
  ])(
    'should pass every scored scenario of revision %s (%i), with a baseline naming the rest',
    async (revision, scored) => {
      const result = await runConformance({
        url: fixture.url,
        requirements: revision,
        baselineFile: path.join(__dirname, `fixture-baseline-${revision}.yml`),
        timeoutMs: 5 * 60_000,
      });
      expect(result.unexpectedFailures, JSON.stringify(result.errors, null, 2)).toEqual([]);
      expect(result.staleBaselineEntries).toEqual([]);
      expect(result.passed.length, result.output).toBeGreaterThanOrEqual(scored);
    },
    600_000,
  );
});
