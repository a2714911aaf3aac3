/**
 * Reads a V8 CPU profile (`node --cpu-prof`, e.g. an edge of bench:edge-ab) and prints where the
 * time went, as shares of the sampled total: by function (self time), by function with its callees
 * (inclusive), or by package / dist directory.
 *
 *   node dist/bench/cpu-profile-summary.js PROFILE.cpuprofile [self|inclusive|package] [top=40] [lastSeconds]
 *
 * `lastSeconds`: only the profile's last seconds (a bench's measured rounds, without start-up and
 * warm-up); idle and `(program)` time are then left out, so shares are of busy time.
 * Comparing two edges' summaries from the same run (same rounds) shows what one does more of.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, mode = 'self', top = '40', lastSeconds = '0'] = process.argv.slice(2);
if (!file) {
  console.error('usage: cpu-profile-summary PROFILE.cpuprofile [self|inclusive|package] [top] [lastSeconds]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// A node's self time is the sum of its samples' time deltas.
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const span = profile.timeDeltas.reduce((a, b) => a + b, 0);
const windowStart = Number(lastSeconds) > 0 ? span - Number(lastSeconds) * 1e6 : -Infinity;
const selfTime = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at < windowStart) return;
  const name = byId.get(id)?.callFrame.functionName;
  if (windowStart > -Infinity && (name === '(idle)' || name === '(program)')) return;
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

const shortUrl = (url: string) => url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'dist/');
const frameName = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const packageOf = (n: ProfileNode) => {
  const url = n.callFrame.url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.includes('/dist/')) return shortUrl(url).split('/').slice(0, 4).join('/');
  return url || n.callFrame.functionName;
};

const shares = new Map<string, number>();
const add = (key: string, t: number) => shares.set(key, (shares.get(key) ?? 0) + t);
for (const [id, t] of selfTime) {
  const node = byId.get(id)!;
  if (mode === 'package') add(packageOf(node), t);
  else if (mode === 'self') add(frameName(node), t);
  else {
    // Inclusive: every distinct frame on the sample's stack (a recursive one counted once).
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const name = frameName(byId.get(at)!);
      if (!seen.has(name)) add(name, t);
      seen.add(name);
    }
  }
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled, ${mode}`);
for (const [key, t] of [...shares].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
  console.log(`${((100 * t) / total).toFixed(2).padStart(6)} %  ${key}`);
