import type { PrismaService } from '@tollgate/db';
import { isUuid } from '@tollgate/kernel';

/** A target as a person reads it: `Team web`, `Key ada-agent (tg_Ab3d)`, `Budget of team web (monthly)`. */
type Names = Map<string, string>;

const PERIODS: Record<string, string> = {
  DAY: 'daily',
  WEEK: 'weekly',
  MONTH: 'monthly',
  QUARTER: 'quarterly',
  TOTAL: 'all-time',
};

/**
 * The current names of an org's audit targets, by id, each target type asked once for the ids of a page.
 * A target deleted since has no name here: the caller falls back to the name its details recorded.
 */
export async function targetNames(
  prisma: PrismaService,
  orgId: string,
  targets: { targetType: string; targetId: string | null }[],
): Promise<Names> {
  const idsOf = (...types: string[]) => [
    ...new Set(targets.filter((t) => types.includes(t.targetType) && t.targetId).map((t) => t.targetId!)),
  ];
  const ids = (...types: string[]) => idsOf(...types).filter(isUuid);
  const names: Names = new Map();

  const [teams, users, keys, upstreams, tokens, budgets, prices, webhooks, policies, limits, tools, org] =
    await Promise.all([
      prisma.team.findMany({ where: { orgId, id: { in: ids('team') } }, select: { id: true, name: true } }),
      prisma.user.findMany({
        where: { orgId, id: { in: ids('user') } },
        select: { id: true, name: true, email: true },
      }),
      prisma.virtualKey.findMany({
        where: { orgId, id: { in: ids('virtual-key') } },
        select: { id: true, name: true, prefix: true },
      }),
      prisma.upstreamServer.findMany({
        where: { orgId, id: { in: ids('upstream') } },
        select: { id: true, namespace: true },
      }),
      prisma.adminToken.findMany({
        where: { orgId, id: { in: ids('admin-token') } },
        select: { id: true, name: true },
      }),
      prisma.budget.findMany({
        where: { orgId, id: { in: ids('budget') } },
        select: { id: true, scope: true, scopeId: true, period: true },
      }),
      prisma.priceRule.findMany({
        where: { orgId, id: { in: ids('price-rule') } },
        select: { id: true, toolPattern: true, upstream: { select: { namespace: true } } },
      }),
      prisma.alertWebhook.findMany({
        where: { orgId, id: { in: ids('alert-webhook') } },
        select: { id: true, url: true },
      }),
      prisma.accessPolicy.findMany({
        where: { orgId, id: { in: ids('policy') } },
        select: { id: true, scope: true, scopeId: true },
      }),
      prisma.rateLimit.findMany({
        where: { orgId, id: { in: ids('rate-limit') } },
        select: { id: true, scope: true, scopeId: true, toolPattern: true },
      }),
      prisma.tool.findMany({
        where: { orgId, id: { in: ids('tool') } },
        select: { id: true, name: true, upstream: { select: { namespace: true } } },
      }),
      idsOf('organization').length
        ? prisma.organization.findUnique({ where: { id: orgId }, select: { id: true, name: true } })
        : null,
    ]);

  // Budgets, policies and limits belong to a scope: name it too (one more look-up for their teams, users, keys).
  const scoped = [...budgets, ...policies, ...limits];
  const scopeNames = await scopeNamesOf(prisma, orgId, scoped);
  const scopeName = (s: { scope: string; scopeId: string }) => scopeNames.get(s.scopeId) ?? s.scope.toLowerCase();

  for (const t of teams) names.set(t.id, t.name);
  for (const u of users) names.set(u.id, u.name ? `${u.name} <${u.email}>` : u.email);
  for (const k of keys) names.set(k.id, `${k.name} (${k.prefix})`);
  for (const u of upstreams) names.set(u.id, u.namespace);
  for (const t of tokens) names.set(t.id, t.name);
  for (const b of budgets) names.set(b.id, `${scopeName(b)}, ${PERIODS[b.period] ?? b.period.toLowerCase()}`);
  for (const p of prices) names.set(p.id, `${p.upstream?.namespace ?? 'every upstream'} / ${p.toolPattern}`);
  for (const w of webhooks) names.set(w.id, w.url);
  for (const p of policies) names.set(p.id, scopeName(p));
  for (const l of limits) names.set(l.id, `${scopeName(l)}, ${l.toolPattern}`);
  for (const t of tools) names.set(t.id, `${t.upstream.namespace} / ${t.name}`);
  if (org) names.set(org.id, org.name);
  return names;
}

/** `team web`, `user ada@acme.test`, `key ada-agent`, `the organisation`, by scope id. */
async function scopeNamesOf(
  prisma: PrismaService,
  orgId: string,
  scoped: { scope: string; scopeId: string }[],
): Promise<Names> {
  const of = (scope: string) => [...new Set(scoped.filter((s) => s.scope === scope).map((s) => s.scopeId))];
  const [teams, users, keys] = await Promise.all([
    prisma.team.findMany({ where: { orgId, id: { in: of('TEAM') } }, select: { id: true, name: true } }),
    prisma.user.findMany({ where: { orgId, id: { in: of('USER') } }, select: { id: true, email: true } }),
    prisma.virtualKey.findMany({ where: { orgId, id: { in: of('KEY') } }, select: { id: true, name: true } }),
  ]);
  const names: Names = new Map();
  for (const id of of('ORG')) names.set(id, 'the organisation');
  for (const t of teams) names.set(t.id, `team ${t.name}`);
  for (const u of users) names.set(u.id, `user ${u.email}`);
  for (const k of keys) names.set(k.id, `key ${k.name}`);
  return names;
}

/** The name a row's own details recorded (for a target deleted since). */
export function recordedName(details: unknown): string | null {
  if (!details || typeof details !== 'object' || Array.isArray(details)) return null;
  const d = details as Record<string, unknown>;
  for (const field of ['name', 'namespace', 'email', 'url', 'toolPattern']) {
    const v = d[field];
    if (typeof v === 'string' && v) return v;
    // from/to details: the name it had after the change, else before.
    if (v && typeof v === 'object' && 'to' in v) {
      const pair = v as { from?: unknown; to?: unknown };
      const named = pair.to ?? pair.from;
      if (typeof named === 'string' && named) return named;
    }
  }
  return null;
}
