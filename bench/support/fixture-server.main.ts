/** Runs the HTTP fixture upstream in its own process and prints its URL (benchmark baseline). */
import { startFixtureServer } from '../../test/fixtures/http-fixture-server';

void startFixtureServer().then((s) => {
  process.stdout.write(`${JSON.stringify({ url: s.url })}\n`);
});
