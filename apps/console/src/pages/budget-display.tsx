import { Badge, Progress, Stack, Text } from '@mantine/core';
import type { BudgetUtilisation } from '../api/admin-types';
import type { KeyPlace } from '../lib/budget-parents';
import { type Budget, type BudgetScope } from '../api/governance-types';
import { Money } from '../components/money-text';
import { formatTimestamp } from '../lib/dates';
import { toMicros } from '../lib/money';
import { periodLabel } from '../lib/labels';

/** The budgets page's data: its budgets, their spend, and the names and places they refer to. */
export interface BudgetsData {
  budgets: Budget[];
  /** Spend per budget id. */
  usage: Map<string, BudgetUtilisation>;
  names: Map<string, string>;
  /** Each key's team and person: the budgets above a key budget. */
  keyPlaces: Map<string, KeyPlace>;
  /** What a new budget may be set on: the org's teams and users (a key is searched for). */
  targets: Record<'TEAM' | 'USER', { value: string; label: string }[]>;
}

export const SCOPE_LABELS: Record<BudgetScope, string> = {
  ORG: 'Organisation',
  TEAM: 'Team',
  USER: 'User',
  KEY: 'Key',
};
export const SCOPE_ORDER: BudgetScope[] = ['ORG', 'TEAM', 'USER', 'KEY'];

/** Hard and soft say what they do: one refuses calls at the limit, the other only alerts. */
export function ModeBadge({ mode }: { mode: 'HARD' | 'SOFT' }) {
  return (
    <Badge
      variant="outline"
      color={mode === 'HARD' ? 'red.9' : 'gray.8'}
      c="var(--tg-strong)"
      // The whole label, even in a crowded table: cut to "HARD: REFUSES CA…" it hid what the mode does.
      styles={{ root: { maxWidth: 'none', flexShrink: 0 }, label: { overflow: 'visible' } }}
      title={mode === 'HARD' ? 'Calls over the limit are refused' : 'Calls go on over the limit; alerts fire'}
    >
      {mode === 'HARD' ? 'Hard: refuses calls' : 'Soft: alerts only'}
    </Badge>
  );
}

/** A budget above this one (same period) with a lower limit: this one can never be reached. */
export function ParentWarning({ parents, labelOf }: { parents: Budget[]; labelOf: (b: Budget) => string }) {
  if (parents.length === 0) return null;
  return (
    <Text size="xs" c="var(--tg-warn)" data-testid="budget-parent-warning" role="note">
      Above its parent:{' '}
      {parents.map((p, i) => (
        <span key={p.id}>
          {i > 0 && '; '}
          {labelOf(p)} allows <Money micros={p.limitMicros} /> {periodLabel(p.period)}
        </span>
      ))}
      , so calls stop there first.
    </Text>
  );
}

export function UtilisationBar({
  usage,
  label,
  mode,
  thresholds,
  timeZone,
  refusedNow,
}: {
  usage: BudgetUtilisation;
  label: string;
  mode: 'HARD' | 'SOFT';
  thresholds: number[];
  timeZone: string;
  /** BUDGET_EXCEEDED refusals by this budget in the last minutes. */
  refusedNow: number;
}) {
  const bp = usage.utilisationBp ?? 0;
  const pct = bp / 100;
  const over = thresholds.filter((t) => pct >= t);
  const color = pct >= 100 ? 'red.9' : over.length > 0 ? 'orange.9' : 'teal.9';
  return (
    <Stack gap={4}>
      <Progress
        value={Math.min(100, pct)}
        color={color}
        size="lg"
        aria-label={`${label}: ${pct.toFixed(1)} % used`}
        data-testid="budget-bar"
      />
      <Text size="xs" c="dimmed">
        <Money micros={toMicros(usage.spentMicros) + toMicros(usage.reservedMicros)} testId="budget-spent" /> of{' '}
        <Money micros={usage.limitMicros} /> ({pct.toFixed(1)} %)
        {toMicros(usage.reservedMicros) > 0n && ' incl. calls in flight'}
        {usage.resetsAt ? ` · resets ${formatTimestamp(usage.resetsAt, timeZone)}` : ' · never resets'}
      </Text>
      {refusedNow > 0 && (
        <Text size="xs" fw={600} c="var(--tg-danger)" data-testid="budget-blocking">
          Blocking now: {refusedNow.toLocaleString()} {refusedNow === 1 ? 'call' : 'calls'} refused in the last minutes
        </Text>
      )}
      {pct >= 100 && (
        <Text size="xs" fw={600} c={mode === 'HARD' ? 'var(--tg-danger)' : 'var(--tg-warn)'} data-testid="budget-state">
          {mode === 'HARD'
            ? 'Limit reached: calls that would spend more are refused until it resets.'
            : 'Over its soft limit: calls go on; its alerts have fired.'}
        </Text>
      )}
    </Stack>
  );
}
