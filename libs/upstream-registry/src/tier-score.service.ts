import { Injectable, Logger } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';

/** How tools are scored from their usage and cut into tiers. */
export interface TierScoreSettings {
  /** Shares of the score; they need not sum to 1 (they are normalised). */
  weights: { popularity: number; reliability: number; latency: number; recency: number };
  /** Lowest score of each tier; below `standard` is COLD. */
  thresholds: { hot: number; warm: number; standard: number };
  /** Days of rollups the score looks at. */
  windowDays: number;
  /** Mean latency that scores one half on the latency part (0 ms scores 1). */
  latencyReferenceMs: number;
  /** Days after which the recency part halves. */
  recencyHalfLifeDays: number;
}

export const DEFAULT_TIER_SCORE_SETTINGS: TierScoreSettings = {
  weights: { popularity: 0.4, reliability: 0.3, latency: 0.2, recency: 0.1 },
  thresholds: { hot: 0.6, warm: 0.4, standard: 0.15 },
  windowDays: 30,
  latencyReferenceMs: 1000,
  recencyHalfLifeDays: 7,
};

/**
 * The score a tool without usage gets, so a new organisation's hot list is not empty: a small
 * base, more for a read-only tool (safe to try) and for a short schema (cheap to list). Its
 * maximum (0.25) stays below any used, reliable tool's score.
 */
export const UNUSED_TOOL_PRIOR = { base: 0.05, readOnly: 0.1, shortSchema: 0.1, shortSchemaTokens: 400 } as const;

export interface TierScoreResult {
  orgId: string;
  /** Tools whose score or tier changed. */
  changed: number;
}

/**
 * Tier scores per organisation from the daily usage rollups, in one SQL statement: popularity
 * (log of calls against the org's busiest tool), reliability (share of calls without error),
 * latency (mean, against a reference) and recency (halving per half-life since the last day of
 * use), weighted; tools without usage get `UNUSED_TOOL_PRIOR`. Tiers come from the thresholds.
 */
@Injectable()
export class TierScoreService {
  private readonly logger = new Logger(TierScoreService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  /** Organisations that have tools, for a scheduled pass over all of them. */
  async orgsWithTools(): Promise<string[]> {
    const rows = await this.prisma.tool.findMany({
      where: { removedAt: null },
      distinct: ['orgId'],
      select: { orgId: true },
    });
    return rows.map((r) => r.orgId);
  }

  async computeForOrg(
    orgId: string,
    settings: TierScoreSettings = DEFAULT_TIER_SCORE_SETTINGS,
  ): Promise<TierScoreResult> {
    const w = normalisedWeights(settings.weights);
    const t = settings.thresholds;
    const p = UNUSED_TOOL_PRIOR;
    const changed = await this.prisma.$executeRaw`
      WITH usage AS (
        SELECT r."upstreamId", r."toolName",
               SUM(r."calls")::float8 AS calls, SUM(r."errors")::float8 AS errors,
               SUM(r."latencyMsSum")::float8 AS latency_sum, MAX(r."day") AS last_day
        FROM "UsageDailyRollup" r
        WHERE r."orgId" = ${orgId}::uuid AND r."day" > (now() AT TIME ZONE 'UTC')::date - ${settings.windowDays}::int
        GROUP BY r."upstreamId", r."toolName"
        HAVING SUM(r."calls") > 0
      ),
      peak AS (SELECT GREATEST(MAX(calls), 1) AS max_calls FROM usage),
      scored AS (
        SELECT tool."id",
          ROUND((CASE WHEN u.calls IS NULL THEN
              ${p.base}::float8
              + ${p.readOnly}::float8 * (CASE WHEN COALESCE(tool."pinnedDefinition", tool."definition") -> 'annotations' ->> 'readOnlyHint' = 'true' THEN 1 ELSE 0 END)
              + ${p.shortSchema}::float8 * GREATEST(0, 1 - tool."schemaTokens"::float8 / ${p.shortSchemaTokens}::float8)
            ELSE
              ${w.popularity}::float8 * LN(1 + u.calls) / LN(1 + peak.max_calls)
              + ${w.reliability}::float8 * (1 - u.errors / u.calls)
              + ${w.latency}::float8 / (1 + (u.latency_sum / u.calls) / ${settings.latencyReferenceMs}::float8)
              + ${w.recency}::float8 * POWER(0.5, ((now() AT TIME ZONE 'UTC')::date - u.last_day)::float8 / ${settings.recencyHalfLifeDays}::float8)
            END)::numeric, 6)::float8 AS score
        FROM "Tool" tool
        CROSS JOIN peak
        LEFT JOIN usage u ON u."upstreamId" = tool."upstreamId" AND u."toolName" = tool."name"
        WHERE tool."orgId" = ${orgId}::uuid AND tool."removedAt" IS NULL
      ),
      tiered AS (
        SELECT s."id", s.score,
          (CASE WHEN s.score >= ${t.hot}::float8 THEN 'HOT' WHEN s.score >= ${t.warm}::float8 THEN 'WARM'
                WHEN s.score >= ${t.standard}::float8 THEN 'STANDARD' ELSE 'COLD' END)::"ToolTier" AS tier
        FROM scored s
      )
      UPDATE "Tool" tool SET "tierScore" = tiered.score, "tier" = tiered.tier
      FROM tiered
      WHERE tool."id" = tiered."id" AND tool."orgId" = ${orgId}::uuid
        AND (tool."tierScore" IS DISTINCT FROM tiered.score OR tool."tier" IS DISTINCT FROM tiered.tier)
    `;
    const p99Changed = await this.observeOutputTokens(orgId, settings.windowDays);
    // Edges rebuild their catalog (and so the hot list and reservations) only when something moved.
    if (changed + p99Changed > 0) await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    this.logger.debug(`tier scores of org ${orgId}: ${changed} tool(s) changed, ${p99Changed} output p99(s) changed`);
    return { orgId, changed: changed + p99Changed };
  }

  /**
   * Each tool's 99th percentile of output tokens over its calls of the window (answered or tool
   * errors; a call whose upstream failed returned nothing), from the ledger; null when it has none.
   * The edge reserves a call's likely cost from it (likelyOutputTokens in @tollgate/pricing).
   */
  private observeOutputTokens(orgId: string, windowDays: number): Promise<number> {
    return this.prisma.$executeRaw`
      WITH observed AS (
        SELECT e."upstreamId", e."toolName",
               percentile_disc(0.99) WITHIN GROUP (ORDER BY e."outputTokens") AS p99
        FROM "UsageEvent" e
        WHERE e."orgId" = ${orgId}::uuid AND e."occurredAt" > now() - make_interval(days => ${windowDays}::int)
          AND e."outcome" IN ('OK', 'TOOL_ERROR')
        GROUP BY e."upstreamId", e."toolName"
      ),
      next AS (
        SELECT tool."id", o.p99
        FROM "Tool" tool
        LEFT JOIN observed o ON o."upstreamId" = tool."upstreamId" AND o."toolName" = tool."name"
        WHERE tool."orgId" = ${orgId}::uuid AND tool."removedAt" IS NULL
      )
      UPDATE "Tool" tool SET "outputTokensP99" = next.p99
      FROM next
      WHERE tool."id" = next."id" AND tool."outputTokensP99" IS DISTINCT FROM next.p99
    `;
  }
}

/** Weights scaled to sum to 1, so scores stay in [0, 1] whatever the configured shares. */
export function normalisedWeights(weights: TierScoreSettings['weights']): TierScoreSettings['weights'] {
  const sum = weights.popularity + weights.reliability + weights.latency + weights.recency;
  if (!(sum > 0)) return DEFAULT_TIER_SCORE_SETTINGS.weights;
  return {
    popularity: weights.popularity / sum,
    reliability: weights.reliability / sum,
    latency: weights.latency / sum,
    recency: weights.recency / sum,
  };
}
