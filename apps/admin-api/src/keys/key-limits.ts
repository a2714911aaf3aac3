import type { AdminPrincipal } from '@tollgate/identity';

export type LimitDecision = { allowed: true } | { allowed: false; status: 403; message: string; field: string };

interface TeamBudget {
  period: string;
  limitMicros: bigint;
}

interface TeamRateLimit {
  toolPattern: string;
  windowSeconds: number;
  callsPerWindow: number | null;
  maxConcurrent: number | null;
}

/**
 * Who may set a limit on a key: org and platform admins any; a team admin on its team's keys (the
 * KeyScopeGuard already hid other teams' keys) within what the team has; members and finance never.
 */
function roleMay(admin: AdminPrincipal): LimitDecision {
  if (admin.role === 'PLATFORM_ADMIN' || admin.role === 'ORG_ADMIN' || admin.role === 'TEAM_ADMIN')
    return { allowed: true };
  return {
    allowed: false,
    status: 403,
    field: 'role',
    message: `role ${admin.role} may not set limits on keys; it needs ORG_ADMIN or the team’s TEAM_ADMIN`,
  };
}

/** A team admin's key budget may not exceed the team's budget of the same period (where the team has one). */
export function decideKeyBudget(
  admin: AdminPrincipal,
  req: { period: string; limitMicros: bigint },
  teamBudgets: TeamBudget[],
): LimitDecision {
  const role = roleMay(admin);
  if (!role.allowed || admin.role !== 'TEAM_ADMIN') return role;
  const team = teamBudgets.find((b) => b.period === req.period);
  if (team && req.limitMicros > team.limitMicros) {
    return {
      allowed: false,
      status: 403,
      field: 'limitMicros',
      message: `limitMicros ${req.limitMicros} is above the team’s ${req.period} budget of ${team.limitMicros}; a team admin sets key budgets within the team’s`,
    };
  }
  return { allowed: true };
}

/**
 * A team admin's key rate limit may not be above a team limit on the same tool pattern: calls per
 * the same window, or concurrent calls. (The team's limit applies anyway; this refuses a key limit
 * that promises more than the team allows.)
 */
export function decideKeyRateLimit(
  admin: AdminPrincipal,
  req: { toolPattern: string; windowSeconds: number; callsPerWindow: number | null; maxConcurrent: number | null },
  teamLimits: TeamRateLimit[],
): LimitDecision {
  const role = roleMay(admin);
  if (!role.allowed || admin.role !== 'TEAM_ADMIN') return role;
  for (const t of teamLimits.filter((l) => l.toolPattern === req.toolPattern)) {
    if (
      t.callsPerWindow !== null &&
      req.callsPerWindow !== null &&
      t.windowSeconds === req.windowSeconds &&
      req.callsPerWindow > t.callsPerWindow
    ) {
      return {
        allowed: false,
        status: 403,
        field: 'callsPerWindow',
        message: `callsPerWindow ${req.callsPerWindow} is above the team’s ${t.callsPerWindow} per ${t.windowSeconds}s on ${t.toolPattern}`,
      };
    }
    if (t.maxConcurrent !== null && req.maxConcurrent !== null && req.maxConcurrent > t.maxConcurrent) {
      return {
        allowed: false,
        status: 403,
        field: 'maxConcurrent',
        message: `maxConcurrent ${req.maxConcurrent} is above the team’s ${t.maxConcurrent} on ${t.toolPattern}`,
      };
    }
  }
  return { allowed: true };
}
