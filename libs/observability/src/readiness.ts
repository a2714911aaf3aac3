import { HttpStatus } from '@nestjs/common';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '@tollgate/kernel';
import type { Response } from 'express';

/** One check's outcome in a `/readyz` answer. */
export type ReadinessCheckResult = 'ok' | 'failed';

/**
 * The `/readyz` body every process answers (edge, admin API, worker): one status and one entry per
 * check, so one probe config reads all three. Extra fields (e.g. the worker's missing schedulers)
 * may sit beside `checks`.
 */
export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: Record<string, ReadinessCheckResult>;
}

/** A check passes when its promise resolves to anything but `false`; a throw or `false` fails it. */
export type ReadinessCheck = () => Promise<unknown>;

const CHECK_TIMEOUT_MS = 2000;

/**
 * Runs the checks at once (each bounded by a timeout, so a hung dependency cannot hang the probe)
 * and writes the status code: 200 when all pass, else 503 with `Retry-After`. `failures` carries
 * each failed check's reason for the caller's log (never put in the body).
 */
export async function runReadiness(
  res: Response,
  checks: Record<string, ReadinessCheck>,
): Promise<{ readiness: Readiness; failures: Record<string, string> }> {
  const names = Object.keys(checks);
  const settled = await Promise.allSettled(names.map((name) => withTimeout(checks[name](), CHECK_TIMEOUT_MS)));
  const results: Record<string, ReadinessCheckResult> = {};
  const failures: Record<string, string> = {};
  names.forEach((name, i) => {
    const r = settled[i];
    const ok = r.status === 'fulfilled' && r.value !== false;
    results[name] = ok ? 'ok' : 'failed';
    if (!ok)
      failures[name] =
        r.status === 'rejected' ? (r.reason instanceof Error ? r.reason.message : String(r.reason)) : 'returned false';
  });
  const ready = Object.values(results).every((v) => v === 'ok');
  res.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
  if (!ready) res.setHeader('Retry-After', String(DEPENDENCY_RETRY_AFTER_SECONDS));
  return { readiness: { status: ready ? 'ok' : 'unavailable', checks: results }, failures };
}

/**
 * The answer while the process drains after SIGTERM: 503 at once, whatever the dependencies say,
 * so load balancers take it out before it stops accepting connections. `accepting` is the check.
 */
export function drainingReadiness(res: Response): Readiness {
  res.status(HttpStatus.SERVICE_UNAVAILABLE);
  res.setHeader('Retry-After', String(DEPENDENCY_RETRY_AFTER_SECONDS));
  return { status: 'unavailable', checks: { accepting: 'failed' } };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
