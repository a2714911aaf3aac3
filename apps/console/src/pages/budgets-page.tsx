import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Modal,
  Progress,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { FormEvent, useState } from 'react';
import { ApiError, api, get, send, toApiError } from '../api/admin-client';
import type { BudgetUtilisation, Key, Team, User } from '../api/admin-types';
import { BUDGET_PERIODS, type Budget, type BudgetPeriod, type BudgetScope } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { decimalToMicros } from '../lib/money-input';
import { microsToDecimal, toMicros } from '../lib/money';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';

interface BudgetsData {
  budgets: Budget[];
  /** Spend per budget id. */
  usage: Map<string, BudgetUtilisation>;
  names: Map<string, string>;
  /** What a new budget may be set on: the org's teams, users and live keys. */
  targets: Record<Exclude<BudgetScope, 'ORG'>, { value: string; label: string }[]>;
}

const SCOPE_LABELS: Record<BudgetScope, string> = { ORG: 'Organisation', TEAM: 'Team', USER: 'User', KEY: 'Key' };
const SCOPE_ORDER: BudgetScope[] = ['ORG', 'TEAM', 'USER', 'KEY'];

export function BudgetsPage() {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const data = useLoad<BudgetsData>(async () => {
    // Both lists come scoped to the caller's role by the API (a team admin: its team's and its keys').
    const [budgets, usage, teams, users, keys] = await Promise.all([
      get<Budget[]>(`${orgPath}/budgets`),
      get<BudgetUtilisation[]>(`${orgPath}/reports/budgets`),
      get<Team[]>(`${orgPath}/teams`),
      get<User[]>(`${orgPath}/users`),
      get<Key[]>(`${orgPath}/keys`),
    ]);
    const names = new Map<string, string>([[org.id, org.name]]);
    for (const t of teams) names.set(t.id, t.name);
    for (const u of users) names.set(u.id, u.name ?? u.email);
    for (const k of keys) names.set(k.id, `${k.name} (${k.prefix})`);
    budgets.sort(
      (a, b) =>
        SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope) ||
        (names.get(a.scopeId) ?? '').localeCompare(names.get(b.scopeId) ?? ''),
    );
    const byLabel = (a: { label: string }, b: { label: string }) => a.label.localeCompare(b.label);
    const targets = {
      TEAM: teams.map((t) => ({ value: t.id, label: t.name })).sort(byLabel),
      USER: users.map((u) => ({ value: u.id, label: u.name ? `${u.name} <${u.email}>` : u.email })).sort(byLabel),
      KEY: keys
        .filter((k) => !k.revokedAt)
        .map((k) => ({ value: k.id, label: `${k.name} (${k.prefix})` }))
        .sort(byLabel),
    };
    return {
      budgets,
      usage: new Map(usage.map((u) => [u.budgetId, u])),
      names,
      targets,
    };
  }, [orgPath]);
  const [scope, setScope] = useState<'ALL' | BudgetScope>('ALL');
  const [editing, setEditing] = useState<Budget | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const mayEdit = canManageOrg(me.role);

  if (data.state === 'loading') return <LoadingState label="Loading budgets…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="budgets" onRetry={data.reload} />;
  const { budgets, usage, names, targets } = data.data;
  const labelOf = (b: Budget) => `${SCOPE_LABELS[b.scope]} ${names.get(b.scopeId) ?? b.scopeId}`;
  const shown = budgets.filter((b) => scope === 'ALL' || b.scope === scope);

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <SegmentedControl
          aria-label="Scope"
          value={scope}
          onChange={(v) => setScope(v as typeof scope)}
          data={[{ value: 'ALL', label: 'All' }, ...SCOPE_ORDER.map((s) => ({ value: s, label: SCOPE_LABELS[s] }))]}
        />
        <Group>
          <Text size="sm" c="gray.8">
            Periods are calendar periods in {org.timeZone}.{!mayEdit && ' Read only for your role.'}
          </Text>
          {mayEdit && (
            <Button onClick={() => setCreating(true)} data-testid="new-budget">
              New budget
            </Button>
          )}
        </Group>
      </Group>
      <Card withBorder p={0}>
        {shown.length === 0 ? (
          <EmptyState title={budgets.length === 0 ? 'No budgets yet' : 'No budget of this scope'}>
            {budgets.length === 0
              ? mayEdit
                ? 'Without a budget, spend is not capped. Set one with New budget.'
                : 'Without a budget, spend is not capped. An org admin sets budgets.'
              : 'Choose another scope to see its budgets.'}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={900}>
            <Table data-testid="budgets-table" verticalSpacing="sm">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Scope</Table.Th>
                  <Table.Th>Period</Table.Th>
                  <Table.Th>Mode</Table.Th>
                  <Table.Th w={320}>Utilisation</Table.Th>
                  <Table.Th>Limit</Table.Th>
                  <Table.Th>Alerts at</Table.Th>
                  {mayEdit && <Table.Th>Actions</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {shown.map((b) => {
                  const u = usage.get(b.id);
                  const label = labelOf(b);
                  return (
                    <Table.Tr key={b.id} data-testid="budget-line" data-budget-id={b.id}>
                      <Table.Td>{label}</Table.Td>
                      <Table.Td>{b.period.toLowerCase()}</Table.Td>
                      <Table.Td>
                        <Badge variant="outline" color={b.mode === 'HARD' ? 'red.9' : 'gray.8'} c="dark.9">
                          {b.mode === 'HARD' ? 'Hard' : 'Soft'}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        {u ? (
                          <UtilisationBar
                            usage={u}
                            label={label}
                            thresholds={b.alertThresholds}
                            timeZone={org.timeZone}
                          />
                        ) : (
                          <Text size="sm" c="gray.8">
                            —
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Money micros={b.limitMicros} testId="budget-limit" />
                      </Table.Td>
                      <Table.Td>
                        {b.alertThresholds.length ? b.alertThresholds.map((t) => `${t} %`).join(', ') : 'none'}
                      </Table.Td>
                      {mayEdit && (
                        <Table.Td>
                          <Group gap={4} wrap="nowrap">
                            <Button
                              size="xs"
                              variant="subtle"
                              onClick={() => setEditing(b)}
                              aria-label={`Edit budget of ${label}, ${b.period.toLowerCase()}`}
                            >
                              Edit
                            </Button>
                            <Button
                              size="xs"
                              variant="subtle"
                              color="red.9"
                              c="red.9"
                              onClick={() => setDeleting(b)}
                              aria-label={`Delete budget of ${label}, ${b.period.toLowerCase()}`}
                            >
                              Delete
                            </Button>
                          </Group>
                        </Table.Td>
                      )}
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
      {editing && (
        <EditBudgetModal
          budget={editing}
          label={labelOf(editing)}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            data.reload();
          }}
        />
      )}
      {creating && (
        <CreateBudgetModal
          orgId={org.id}
          orgName={org.name}
          targets={targets}
          budgets={budgets}
          labelOf={labelOf}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            data.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmModal
          title={`Delete the ${deleting.period.toLowerCase()} budget of ${labelOf(deleting)}?`}
          confirmLabel="Delete budget"
          testId="confirm-delete-budget"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api('DELETE', `${orgPath}/budgets/${deleting.id}`);
            setDeleting(null);
            data.reload();
          }}
        >
          <Text size="sm">
            Calls are no longer capped or alerted by this budget (other budgets still apply). Spend already recorded
            stays in the reports.
          </Text>
        </ConfirmModal>
      )}
    </Stack>
  );
}

function UtilisationBar({
  usage,
  label,
  thresholds,
  timeZone,
}: {
  usage: BudgetUtilisation;
  label: string;
  thresholds: number[];
  timeZone: string;
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
      <Text size="xs" c="gray.8">
        <Money micros={toMicros(usage.spentMicros) + toMicros(usage.reservedMicros)} testId="budget-spent" /> of{' '}
        <Money micros={usage.limitMicros} /> ({pct.toFixed(1)} %)
        {toMicros(usage.reservedMicros) > 0n && ' incl. calls in flight'}
        {usage.resetsAt ? ` · resets ${formatTimestamp(usage.resetsAt, timeZone)}` : ' · never resets'}
      </Text>
    </Stack>
  );
}

function EditBudgetModal({
  budget,
  label,
  onClose,
  onSaved,
}: {
  budget: Budget;
  label: string;
  onClose: () => void;
  onSaved: () => void;
}) {
  const orgPath = useOrgPath();
  const { currency } = useSession();
  const [limit, setLimit] = useState(microsToDecimal(budget.limitMicros));
  const [mode, setMode] = useState<string | null>(budget.mode);
  const [thresholds, setThresholds] = useState(budget.alertThresholds.join(', '));
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const micros = decimalToMicros(limit);
  const parsedThresholds = parseThresholds(thresholds) ?? [];
  const thresholdsOk = parseThresholds(thresholds) !== null;

  async function save(e: FormEvent) {
    e.preventDefault();
    if (micros === null || micros > BigInt(Number.MAX_SAFE_INTEGER) || !thresholdsOk) return;
    setBusy(true);
    setError(null);
    try {
      // If-Match: the version this form was opened on, so a change made meanwhile is not overwritten.
      await send(
        'PUT',
        `${orgPath}/budgets`,
        {
          scope: budget.scope,
          scopeId: budget.scopeId,
          period: budget.period,
          limitMicros: Number(micros),
          mode,
          alertThresholds: parsedThresholds,
        },
        { 'If-Match': `"${budget.version}"` },
      );
      onSaved();
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <Modal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title={`Edit budget: ${label}, ${budget.period.toLowerCase()}`}
    >
      <form onSubmit={save} noValidate>
        <Stack>
          <TextInput
            label={`Limit (${currency})`}
            description="Up to six decimals; kept exactly as micro-units"
            value={limit}
            onChange={(e) => setLimit(e.currentTarget.value)}
            error={
              micros === null
                ? 'Enter an amount such as 50 or 12.345678'
                : error?.field === 'limitMicros'
                  ? error.message
                  : undefined
            }
            data-testid="budget-limit-input"
          />
          <Select
            label="Mode"
            description="Hard refuses calls over the limit; soft only alerts"
            data={[
              { value: 'HARD', label: 'Hard' },
              { value: 'SOFT', label: 'Soft' },
            ]}
            value={mode}
            onChange={setMode}
            allowDeselect={false}
            data-testid="budget-mode"
          />
          <TextInput
            label="Alert thresholds (%)"
            description="Comma separated, e.g. 50, 80, 100"
            value={thresholds}
            onChange={(e) => setThresholds(e.currentTarget.value)}
            error={
              !thresholdsOk
                ? 'Whole percentages from 1 to 1000'
                : error?.field === 'alertThresholds'
                  ? error.message
                  : undefined
            }
            data-testid="budget-thresholds"
          />
          {error?.status === 412 ? (
            <Alert
              color="orange"
              role="alert"
              title="Changed by someone else"
              data-testid="budget-stale"
              styles={{ title: { color: 'var(--mantine-color-dark-9)' } }}
            >
              <Text size="sm" c="dark.9">
                This budget was changed since you opened it (version {budget.version} is no longer current), so nothing
                was saved. Close this form to see the current budget, then edit again.
              </Text>
            </Alert>
          ) : (
            error &&
            !['limitMicros', 'alertThresholds'].includes(error.field ?? '') && (
              <Alert color="red" role="alert">
                {error.message}
              </Alert>
            )
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={error?.status === 412 ? onSaved : onClose}>
              {error?.status === 412 ? 'Reload budgets' : 'Cancel'}
            </Button>
            <Button
              type="submit"
              loading={busy}
              disabled={micros === null || !thresholdsOk || error?.status === 412}
              data-testid="budget-save"
            >
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

const PERIOD_LABELS: Record<BudgetPeriod, string> = {
  DAY: 'Day',
  WEEK: 'Week',
  MONTH: 'Month',
  QUARTER: 'Quarter',
  TOTAL: 'Total (never resets)',
};

/** "50, 80, 100" to whole percentages; null when one is not a whole number from 1 to 1000. */
function parseThresholds(text: string): number[] | null {
  if (text.trim() === '') return [];
  const values = text.split(',').map((t) => Number(t.trim()));
  return values.every((t) => Number.isInteger(t) && t >= 1 && t <= 1000) ? values : null;
}

/** The scope's API field errors, shown at their inputs; anything else goes to the form's alert. */
const CREATE_FIELDS = ['scope', 'scopeId', 'period', 'limitMicros', 'mode', 'alertThresholds'];

function CreateBudgetModal({
  orgId,
  orgName,
  targets,
  budgets,
  labelOf,
  onClose,
  onCreated,
}: {
  orgId: string;
  orgName: string;
  targets: BudgetsData['targets'];
  budgets: Budget[];
  labelOf: (b: Budget) => string;
  onClose: () => void;
  onCreated: () => void;
}) {
  const orgPath = useOrgPath();
  const { currency } = useSession();
  const [scope, setScope] = useState<BudgetScope>('TEAM');
  const [scopeId, setScopeId] = useState<string | null>(null);
  const [period, setPeriod] = useState<BudgetPeriod>('MONTH');
  const [limit, setLimit] = useState('');
  const [mode, setMode] = useState<string | null>('HARD');
  const [thresholds, setThresholds] = useState('80, 100');
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const target = scope === 'ORG' ? orgId : scopeId;
  const micros = decimalToMicros(limit);
  const limitOk = micros !== null && micros <= BigInt(Number.MAX_SAFE_INTEGER);
  const parsedThresholds = parseThresholds(thresholds);
  // PUT is an upsert: creating over an existing budget would silently replace it.
  const existing = budgets.find((b) => b.scope === scope && b.scopeId === target && b.period === period);
  const fieldError = (field: string) => (error?.field === field ? error.message : undefined);

  async function create(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (!target || !limitOk || parsedThresholds === null || existing) return;
    setBusy(true);
    setError(null);
    try {
      await api('PUT', `${orgPath}/budgets`, {
        scope,
        scopeId: target,
        period,
        limitMicros: Number(micros),
        mode,
        alertThresholds: parsedThresholds,
      });
      onCreated();
    } catch (err) {
      setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <Modal opened onClose={onClose} closeButtonProps={{ 'aria-label': 'Close' }} title="New budget">
      <form onSubmit={create} onChange={() => setError(null)} noValidate>
        <Stack>
          <Select
            label="Scope"
            data={SCOPE_ORDER.map((s) => ({ value: s, label: SCOPE_LABELS[s] }))}
            value={scope}
            onChange={(v) => {
              setScope((v as BudgetScope) ?? 'TEAM');
              setScopeId(null);
            }}
            allowDeselect={false}
            error={fieldError('scope')}
            data-testid="new-budget-scope"
          />
          {scope === 'ORG' ? (
            <Text size="sm">The whole organisation: {orgName}</Text>
          ) : (
            <Select
              label={SCOPE_LABELS[scope]}
              placeholder={`Choose a ${SCOPE_LABELS[scope].toLowerCase()}`}
              searchable
              nothingFoundMessage="None matches"
              limit={100}
              data={targets[scope]}
              value={scopeId}
              onChange={setScopeId}
              error={tried && !scopeId ? `Choose a ${SCOPE_LABELS[scope].toLowerCase()}` : fieldError('scopeId')}
              data-testid="new-budget-target"
            />
          )}
          <Select
            label="Period"
            description="Calendar periods in the organisation's time zone"
            data={BUDGET_PERIODS.map((p) => ({ value: p, label: PERIOD_LABELS[p] }))}
            value={period}
            onChange={(v) => setPeriod((v as BudgetPeriod) ?? 'MONTH')}
            allowDeselect={false}
            error={
              existing
                ? `${labelOf(existing)} already has a ${period.toLowerCase()} budget: edit that one instead`
                : fieldError('period')
            }
            data-testid="new-budget-period"
          />
          <TextInput
            label={`Limit (${currency})`}
            description="Up to six decimals; kept exactly as micro-units"
            value={limit}
            onChange={(e) => setLimit(e.currentTarget.value)}
            error={
              (tried || limit !== '') && !limitOk
                ? 'Enter an amount such as 50 or 12.345678'
                : fieldError('limitMicros')
            }
            data-testid="new-budget-limit"
          />
          <Select
            label="Mode"
            description="Hard refuses calls over the limit; soft only alerts"
            data={[
              { value: 'HARD', label: 'Hard' },
              { value: 'SOFT', label: 'Soft' },
            ]}
            value={mode}
            onChange={setMode}
            allowDeselect={false}
            error={fieldError('mode')}
            data-testid="new-budget-mode"
          />
          <TextInput
            label="Alert thresholds (%)"
            description="Comma separated, e.g. 50, 80, 100"
            value={thresholds}
            onChange={(e) => setThresholds(e.currentTarget.value)}
            error={parsedThresholds === null ? 'Whole percentages from 1 to 1000' : fieldError('alertThresholds')}
            data-testid="new-budget-thresholds"
          />
          {error && !CREATE_FIELDS.includes(error.field ?? '') && (
            <Alert color="red" role="alert">
              {error.message}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={busy} disabled={!!existing} data-testid="new-budget-submit">
              Create budget
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
