import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ADMIN_ENV_SCHEMA, EDGE_ENV_SCHEMA, WORKER_ENV_SCHEMA } from '@tollgate/config';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';

const ROOT = path.resolve(__dirname, '../..');
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

/** What `kubectl kustomize` renders (kubectl from Debian; .ci/run installs it). */
function render(dir: string): any[] {
  const out = execFileSync('kubectl', ['kustomize', path.join(ROOT, dir)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS());
}

/** The variables a schema requires: no default and not optional. */
function requiredVariables(schema: z.AnyZodObject): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => !(field as z.ZodTypeAny).isOptional())
    .map(([name]) => name);
}

describe('Kubernetes manifests (deploy/k8s)', () => {
  const docs = render('deploy/k8s/overlays/example');
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);

  it('should render only objects that validate against the Kubernetes API schemas', () => {
    expect(docs.length).toBeGreaterThan(10);
    for (const doc of docs) {
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${doc.apiVersion} ${doc.kind} has a schema in the test`).toBeDefined();
      expect(() => new Model(doc).validate(), `${doc.kind} ${doc.metadata.name}`).not.toThrow();
    }
  });

  it('should run edge, admin API and worker with probes, resources, a disruption budget, and the edge under an HPA', () => {
    const deployments = byKind('Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      'tollgate-admin-api',
      'tollgate-mcp-edge',
      'tollgate-worker',
    ]);
    for (const d of deployments) {
      const [c] = d.spec.template.spec.containers;
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.resources.requests.cpu && c.resources.limits.memory).toBeTruthy();
      expect(c.image).toBe('registry.example.com/tollgate:0.1.0');
      const pdb = byKind('PodDisruptionBudget').find((p) => p.metadata.name === d.metadata.name);
      expect(pdb?.spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
      expect(byKind('Service').some((s) => s.metadata.name === d.metadata.name)).toBe(true);
      // The drain fits in the grace period: SIGTERM comes after preStop, the deadline after that.
      const config = byKind('ConfigMap')[0].data;
      expect(Number(config.SHUTDOWN_DEADLINE_SECONDS) + c.lifecycle.preStop.sleep.seconds).toBeLessThan(
        d.spec.template.spec.terminationGracePeriodSeconds,
      );
    }
    const [hpa] = byKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef.name).toBe('tollgate-mcp-edge');
    expect(byKind('Job').map((j) => j.metadata.name)).toEqual(['tollgate-migrate']);
  });

  it('should give every app each variable its config schema requires, secrets from the Secret', () => {
    const configMaps = new Map(byKind('ConfigMap').map((c) => [c.metadata.name, c.data as Record<string, string>]));
    const schemas: Record<string, z.AnyZodObject> = {
      'tollgate-mcp-edge': EDGE_ENV_SCHEMA,
      'tollgate-admin-api': ADMIN_ENV_SCHEMA,
      'tollgate-worker': WORKER_ENV_SCHEMA,
    };
    for (const d of byKind('Deployment')) {
      const [c] = d.spec.template.spec.containers;
      const named = new Set<string>(c.env.map((e: { name: string }) => e.name));
      for (const from of c.envFrom)
        for (const k of Object.keys(configMaps.get(from.configMapRef.name) ?? {})) named.add(k);
      const required = requiredVariables(schemas[d.metadata.name]);
      expect(required).toContain('DATABASE_URL');
      for (const name of required) expect([...named], `${d.metadata.name} lacks ${name}`).toContain(name);
      for (const secret of ['DATABASE_URL', 'KEY_HASH_SECRET', 'ENCRYPTION_KEYS', 'METRICS_TOKEN']) {
        const entry = c.env.find((e: { name: string }) => e.name === secret);
        expect(entry?.valueFrom?.secretKeyRef?.name, `${secret} of ${d.metadata.name}`).toBe('tollgate-secrets');
      }
      // Every variable the manifests set is one the app reads (a typo would be ignored silently).
      const known = new Set(Object.keys(schemas[d.metadata.name].shape));
      for (const name of named)
        expect(known.has(name) || isOtherAppsPort(name), `${d.metadata.name}: ${name}`).toBe(true);
    }
  });
});

// The shared ConfigMap carries every app's port; each app reads its own.
function isOtherAppsPort(name: string): boolean {
  return [
    'EDGE_PORT',
    'ADMIN_PORT',
    'WORKER_PORT',
    'EDGE_ACCESS_LOG_SAMPLE',
    'EDGE_PUBLIC_URL',
    'EDGE_ALLOWED_HOSTS',
    'ADMIN_PUBLIC_URL',
  ].includes(name);
}
