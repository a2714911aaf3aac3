import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const DIR = path.resolve(__dirname, '../../deploy/observability');

/** Metric names a PromQL expression uses (histogram series map to their family). */
function metricNames(expr: string): string[] {
  const names = expr.match(/\b(?:tollgate|mcp|process|nodejs)_[a-z0-9_]+/g) ?? [];
  return names.map((n) => n.replace(/_(bucket|count|sum)$/, ''));
}

/** The alert rules and the Grafana dashboard use only metrics the apps expose (scraped from the booted apps). */
describe('deploy/observability: alert rules and dashboard against the real /metrics', () => {
  let p: RunningPlatform;
  const exposed = new Set<string>();
  /** Each app's /metrics text. */
  const scraped: Record<string, string> = {};

  beforeAll(async () => {
    p = await startPlatform();
    for (const [app, url] of Object.entries({ edge: p.edgeUrl, admin: p.adminUrl, worker: p.workerUrl })) {
      const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${p.env.vars.METRICS_TOKEN}` } });
      expect(res.status, url).toBe(200);
      scraped[app] = await res.text();
      for (const [, name] of scraped[app].matchAll(/^# TYPE (\S+) /gm)) exposed.add(name);
    }
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should serve /metrics on the admin API too, with its request histogram', () => {
    expect(exposed).toContain('tollgate_admin_http_request_seconds');
  });

  it('should time the Redis commands and Postgres queries of every app (each has made some since it started)', () => {
    for (const [app, text] of Object.entries(scraped)) {
      const observed = (metric: string) =>
        [...text.matchAll(new RegExp(`^${metric}_count\\{[^}]*\\} (\\d+)`, 'gm'))].reduce(
          (n, m) => n + Number(m[1]),
          0,
        );
      expect(observed('tollgate_redis_command_duration_seconds'), app).toBeGreaterThan(0);
      expect(observed('tollgate_postgres_query_duration_seconds'), app).toBeGreaterThan(0);
    }
  });

  it('should alert only on metrics the apps expose', () => {
    const rules = parse(readFileSync(path.join(DIR, 'prometheus-alerts.yml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(5);
    for (const rule of all) {
      const names = metricNames(rule.expr);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) expect(exposed.has(name), `${rule.alert}: ${name}`).toBe(true);
    }
  });

  it('should chart only metrics the apps expose', () => {
    const dashboard = JSON.parse(readFileSync(path.join(DIR, 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    for (const panel of dashboard.panels)
      for (const target of panel.targets) {
        const names = metricNames(target.expr);
        expect(names.length, panel.title).toBeGreaterThan(0);
        for (const name of names) expect(exposed.has(name), `${panel.title}: ${name}`).toBe(true);
      }
  });
});
