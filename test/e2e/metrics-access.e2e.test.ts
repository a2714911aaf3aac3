import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789';

/** /metrics show spend: only a bearer of METRICS_TOKEN reads them, on the edge and on the worker. */
describe('metrics access', () => {
  let p: RunningPlatform;
  let off: RunningPlatform;

  beforeAll(async () => {
    [p, off] = await Promise.all([startPlatform({ METRICS_TOKEN }), startPlatform({ METRICS_TOKEN: '' })]);
  });

  afterAll(async () => {
    await Promise.all([p?.close(), off?.close()]);
  });

  const get = (url: string, token?: string) =>
    fetch(`${url}/metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  it('should answer 401 with WWW-Authenticate and no figures without the metrics token', async () => {
    for (const url of [p.edgeUrl, p.workerUrl]) {
      for (const token of [undefined, 'wrong-token', p.adminToken]) {
        const res = await get(url, token);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="tollgate-metrics"/);
        const text = await res.text();
        expect(text).not.toMatch(/tollgate_edge_spend_micros_total|tollgate_usage_outbox_entries|process_cpu/);
      }
    }
  });

  it('should serve the metrics to a bearer of the metrics token', async () => {
    const edge = await get(p.edgeUrl, METRICS_TOKEN);
    expect(edge.status).toBe(200);
    expect(await edge.text()).toMatch(/^tollgate_edge_spend_micros_total 0$/m);
    const worker = await get(p.workerUrl, METRICS_TOKEN);
    expect(worker.status).toBe(200);
    expect(await worker.text()).toMatch(/tollgate_usage_outbox_entries\{state="waiting"\}/);
  });

  it('should not serve metrics at all when no metrics token is configured', async () => {
    for (const url of [off.edgeUrl, off.workerUrl]) {
      const res = await get(url);
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/METRICS_TOKEN/);
    }
  });
});
