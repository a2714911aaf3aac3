import {
  Badge,
  Button,
  Card,
  Group,
  Progress,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { FormEvent, useState } from 'react';
import { api, get, send, toApiError } from '../api/admin-client';
import type { BudgetUtilisation, Key, Team, User } from '../api/admin-types';
import { BUDGET_PERIODS, type Budget, type BudgetPeriod, type BudgetScope } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { StaleAlert } from '../components/stale-alert';
import { formatTimestamp } from '../lib/dates';
import { useFieldErrors } from '../lib/field-errors';
import { decimalToMicros } from '../lib/money-input';
import { microsToDecimal, toMicros } from '../lib/money';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { DataTable } from '../components/data-table';

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
    const names = scopeNames({ org, teams, users, keys });
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
          <DataTable
            data-testid="budgets-table"
            verticalSpacing="sm"
            minWidth={900}
            head={
              <>
                <Table.Th>Scope</Table.Th>
                <Table.Th>Period</Table.Th>
                <Table.Th>Mode</Table.Th>
                <Table.Th w={320}>Utilisation</Table.Th>
                <Table.Th>Limit</Table.Th>
                <Table.Th>Alerts at</Table.Th>
                {mayEdit && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
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
                      <UtilisationBar usage={u} label={label} thresholds={b.alertThresholds} timeZone={org.timeZone} />
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
                        <RowAction
                          onClick={() => setEditing(b)}
                          aria-label={`Edit budget of ${label}, ${b.period.toLowerCase()}`}
                        >
                          Edit
                        </RowAction>
                        <RowAction
                          danger
                          onClick={() => setDeleting(b)}
                          aria-label={`Delete budget of ${label}, ${b.period.toLowerCase()}`}
                        >
                          Delete
                        </RowAction>
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              );
            })}
          </DataTable>
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

/** What a budget's create and edit forms both set, as typed. */
interface LimitSettings {
  limit: string;
  mode: string | null;
  thresholds: string;
}

const BAD_LIMIT = 'Enter an amount such as 50 or 12.345678';
const BAD_THRESHOLDS = 'Whole percentages from 1 to 1000';

/** The typed settings read: the limit in micro-units (ok when the API can take it) and the thresholds (null when bad). */
function readLimitSettings(settings: LimitSettings) {
  const micros = decimalToMicros(settings.limit);
  return {
    micros,
    limitOk: micros !== null && micros <= BigInt(Number.MAX_SAFE_INTEGER),
    alertThresholds: parseThresholds(settings.thresholds),
  };
}

/** The limit, mode and alert threshold inputs of the create and edit forms. */
function LimitSettingsFields({
  settings,
  onChange,
  errors,
  testIds,
}: {
  settings: LimitSettings;
  onChange: (settings: LimitSettings) => void;
  errors: { limit?: string; mode?: string; thresholds?: string };
  testIds: { limit: string; mode: string; thresholds: string };
}) {
  const { currency } = useSession();
  return (
    <>
      <TextInput
        label={`Limit (${currency})`}
        description="Up to six decimals; kept exactly as micro-units"
        value={settings.limit}
        onChange={(e) => onChange({ ...settings, limit: e.currentTarget.value })}
        error={errors.limit}
        data-testid={testIds.limit}
      />
      <Select
        label="Mode"
        description="Hard refuses calls over the limit; soft only alerts"
        data={[
          { value: 'HARD', label: 'Hard' },
          { value: 'SOFT', label: 'Soft' },
        ]}
        value={settings.mode}
        onChange={(mode) => onChange({ ...settings, mode })}
        allowDeselect={false}
        error={errors.mode}
        data-testid={testIds.mode}
      />
      <TextInput
        label="Alert thresholds (%)"
        description="Comma separated, e.g. 50, 80, 100"
        value={settings.thresholds}
        onChange={(e) => onChange({ ...settings, thresholds: e.currentTarget.value })}
        error={errors.thresholds}
        data-testid={testIds.thresholds}
      />
    </>
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
  const [settings, setSettings] = useState<LimitSettings>({
    limit: microsToDecimal(budget.limitMicros),
    mode: budget.mode,
    thresholds: budget.alertThresholds.join(', '),
  });
  const errors = useFieldErrors(['limitMicros', 'alertThresholds']);
  const [busy, setBusy] = useState(false);
  const { micros, limitOk, alertThresholds } = readLimitSettings(settings);
  const stale = errors.error?.status === 412;

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!limitOk || alertThresholds === null) return;
    setBusy(true);
    errors.setError(null);
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
          mode: settings.mode,
          alertThresholds,
        },
        { 'If-Match': `"${budget.version}"` },
      );
      onSaved();
    } catch (err) {
      errors.setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <FormModal title={`Edit budget: ${label}, ${budget.period.toLowerCase()}`} onClose={onClose} onSubmit={save}>
      <LimitSettingsFields
        settings={settings}
        onChange={setSettings}
        errors={{
          limit: micros === null ? BAD_LIMIT : errors.at('limitMicros'),
          thresholds: alertThresholds === null ? BAD_THRESHOLDS : errors.at('alertThresholds'),
        }}
        testIds={{ limit: 'budget-limit-input', mode: 'budget-mode', thresholds: 'budget-thresholds' }}
      />
      {stale ? (
        <StaleAlert testId="budget-stale">
          This budget was changed since you opened it (version {budget.version} is no longer current), so nothing was
          saved. Close this form to see the current budget, then edit again.
        </StaleAlert>
      ) : (
        <FormError error={errors.elsewhere} />
      )}
      <FormActions
        submitLabel="Save"
        submitTestId="budget-save"
        busy={busy}
        disabled={micros === null || alertThresholds === null || stale}
        onCancel={stale ? onSaved : onClose}
        cancelLabel={stale ? 'Reload budgets' : 'Cancel'}
      />
    </FormModal>
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
  const [scope, setScope] = useState<BudgetScope>('TEAM');
  const [scopeId, setScopeId] = useState<string | null>(null);
  const [period, setPeriod] = useState<BudgetPeriod>('MONTH');
  const [settings, setSettings] = useState<LimitSettings>({ limit: '', mode: 'HARD', thresholds: '80, 100' });
  const [tried, setTried] = useState(false);
  const errors = useFieldErrors(CREATE_FIELDS);
  const [busy, setBusy] = useState(false);
  const target = scope === 'ORG' ? orgId : scopeId;
  const { micros, limitOk, alertThresholds } = readLimitSettings(settings);
  // PUT is an upsert: creating over an existing budget would silently replace it.
  const existing = budgets.find((b) => b.scope === scope && b.scopeId === target && b.period === period);

  async function create(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (!target || !limitOk || alertThresholds === null || existing) return;
    setBusy(true);
    errors.setError(null);
    try {
      await api('PUT', `${orgPath}/budgets`, {
        scope,
        scopeId: target,
        period,
        limitMicros: Number(micros),
        mode: settings.mode,
        alertThresholds,
      });
      onCreated();
    } catch (err) {
      errors.setError(toApiError(err));
      setBusy(false);
    }
  }

  return (
    <FormModal title="New budget" onClose={onClose} onSubmit={create} onInput={errors.onFormInput}>
      <Select
        label="Scope"
        data={SCOPE_ORDER.map((s) => ({ value: s, label: SCOPE_LABELS[s] }))}
        value={scope}
        onChange={(v) => {
          setScope((v as BudgetScope) ?? 'TEAM');
          setScopeId(null);
        }}
        allowDeselect={false}
        error={errors.at('scope')}
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
          error={tried && !scopeId ? `Choose a ${SCOPE_LABELS[scope].toLowerCase()}` : errors.at('scopeId')}
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
            : errors.at('period')
        }
        data-testid="new-budget-period"
      />
      <LimitSettingsFields
        settings={settings}
        onChange={setSettings}
        errors={{
          limit: (tried || settings.limit !== '') && !limitOk ? BAD_LIMIT : errors.at('limitMicros'),
          mode: errors.at('mode'),
          thresholds: alertThresholds === null ? BAD_THRESHOLDS : errors.at('alertThresholds'),
        }}
        testIds={{ limit: 'new-budget-limit', mode: 'new-budget-mode', thresholds: 'new-budget-thresholds' }}
      />
      <FormError error={errors.elsewhere} />
      <FormActions
        submitLabel="Create budget"
        submitTestId="new-budget-submit"
        busy={busy}
        disabled={!!existing}
        onCancel={onClose}
      />
    </FormModal>
  );
}
