/** Runs the HTTP fixture upstream in its own process and prints its URL (benchmark baseline). */
import { STANDARD_FIXTURE_TOOLS, startFixtureServer } from '../../test/fixtures/http-fixture-server';

// The same upstream for the direct and the governed runs; it keeps no per-call record, so the
// later run does not pay for a heap the earlier one grew.
void startFixtureServer(STANDARD_FIXTURE_TOOLS, { recordCalls: false }).then((s) => {
  process.stdout.write(`${JSON.stringify({ url: s.url })}\n`);
});
