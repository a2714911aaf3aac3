import { Select, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { BUDGET_PERIODS, type Budget, type BudgetPeriod, type BudgetScope } from '../api/governance-types';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { StaleAlert } from '../components/stale-alert';
import { useFormSubmit } from '../lib/form-submit';
import { decimalToMicros } from '../lib/money-input';
import { microsToDecimal } from '../lib/money';
import { useSession } from '../session';
import { periodLabel } from '../lib/labels';
import { type BudgetLimit, type KeyPlace } from '../lib/budget-parents';
import type { Key } from '../api/admin-types';
import { KeyPicker } from '../components/key-picker';
import { type BudgetsData, ParentWarning, SCOPE_LABELS, SCOPE_ORDER } from './budget-display';

/** What a budget's create and edit forms both set, as typed. */
interface LimitSettings {
  limit: string;
  mode: Budget['mode'];
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
        description="Hard refuses calls over the limit; soft lets them go on and only alerts"
        data={[
          { value: 'HARD', label: 'Hard: refuse calls over the limit' },
          { value: 'SOFT', label: 'Soft: alert only, calls go on' },
        ]}
        value={settings.mode}
        onChange={(mode) => onChange({ ...settings, mode: mode === 'SOFT' ? 'SOFT' : 'HARD' })}
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

export function EditBudgetModal({
  budget,
  label,
  parentsBelow,
  labelOf,
  onClose,
  onSaved,
}: {
  budget: Budget;
  label: string;
  /** The budgets above it that the limit typed would exceed. */
  parentsBelow: (limitMicros: string) => Budget[];
  labelOf: (b: Budget) => string;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [settings, setSettings] = useState<LimitSettings>({
    limit: microsToDecimal(budget.limitMicros),
    mode: budget.mode,
    thresholds: budget.alertThresholds.join(', '),
  });
  const form = useFormSubmit(['limitMicros', 'alertThresholds']);
  const { micros, limitOk, alertThresholds } = readLimitSettings(settings);
  const stale = form.error?.status === 412;

  const save = form.onSubmit(async () => {
    if (!limitOk || alertThresholds === null) return;
    // If-Match: the version this form was opened on, so a change made meanwhile is not overwritten.
    await answer(
      adminApi.PUT('/v1/orgs/{orgId}/budgets', {
        params: { path: { orgId: budget.orgId }, header: { 'If-Match': `"${budget.version}"` } },
        body: {
          scope: budget.scope,
          scopeId: budget.scopeId,
          period: budget.period,
          limitMicros: Number(micros),
          mode: settings.mode,
          alertThresholds,
        },
      }),
    );
    onSaved();
  });

  return (
    <FormModal title={`Edit budget: ${label}, ${periodLabel(budget.period)}`} onClose={onClose} onSubmit={save}>
      <LimitSettingsFields
        settings={settings}
        onChange={setSettings}
        errors={{
          limit: micros === null ? BAD_LIMIT : form.at('limitMicros'),
          thresholds: alertThresholds === null ? BAD_THRESHOLDS : form.at('alertThresholds'),
        }}
        testIds={{ limit: 'budget-limit-input', mode: 'budget-mode', thresholds: 'budget-thresholds' }}
      />
      {micros !== null && <ParentWarning parents={parentsBelow(String(micros))} labelOf={labelOf} />}
      {stale ? (
        <StaleAlert testId="budget-stale">
          This budget was changed since you opened it (version {budget.version} is no longer current), so nothing was
          saved. Close this form to see the current budget, then edit again.
        </StaleAlert>
      ) : (
        <FormError error={form.elsewhere} />
      )}
      <FormActions
        submitLabel="Save"
        submitTestId="budget-save"
        busy={form.busy}
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

export function CreateBudgetModal({
  orgId,
  orgName,
  targets,
  budgets,
  labelOf,
  parentsBelow,
  onClose,
  onCreated,
}: {
  orgId: string;
  orgName: string;
  targets: BudgetsData['targets'];
  budgets: Budget[];
  labelOf: (b: Budget) => string;
  parentsBelow: (b: BudgetLimit, key?: KeyPlace & { id: string }) => Budget[];
  onClose: () => void;
  onCreated: () => void;
}) {
  const [scope, setScope] = useState<BudgetScope>('TEAM');
  const [scopeId, setScopeId] = useState<string | null>(null);
  // The key searched for and chosen: its team and owner are the budgets above a new key budget.
  const [chosenKey, setChosenKey] = useState<Key | null>(null);
  const [period, setPeriod] = useState<BudgetPeriod>('MONTH');
  const [settings, setSettings] = useState<LimitSettings>({ limit: '', mode: 'HARD', thresholds: '80, 100' });
  const [tried, setTried] = useState(false);
  const form = useFormSubmit(CREATE_FIELDS);
  const target = scope === 'ORG' ? orgId : scopeId;
  const { micros, limitOk, alertThresholds } = readLimitSettings(settings);
  // PUT is an upsert: creating over an existing budget would silently replace it.
  const existing = budgets.find((b) => b.scope === scope && b.scopeId === target && b.period === period);

  const create = form.onSubmit(async () => {
    setTried(true);
    if (!target || !limitOk || alertThresholds === null || existing) return;
    await answer(
      adminApi.PUT('/v1/orgs/{orgId}/budgets', {
        params: { path: { orgId } },
        body: { scope, scopeId: target, period, limitMicros: Number(micros), mode: settings.mode, alertThresholds },
      }),
    );
    onCreated();
  });

  return (
    <FormModal title="New budget" onClose={onClose} onSubmit={create} onInput={form.onFormInput}>
      <Select
        label="Scope"
        data={SCOPE_ORDER.map((s) => ({ value: s, label: SCOPE_LABELS[s] }))}
        value={scope}
        onChange={(v) => {
          setScope((v as BudgetScope) ?? 'TEAM');
          setScopeId(null);
        }}
        allowDeselect={false}
        error={form.at('scope')}
        data-testid="new-budget-scope"
      />
      {scope === 'ORG' ? (
        <Text size="sm">The whole organisation: {orgName}</Text>
      ) : scope === 'KEY' ? (
        <KeyPicker
          live
          placeholder="Type to search the keys"
          value={scopeId}
          onChange={(id, key) => {
            setScopeId(id);
            setChosenKey(key ?? null);
          }}
          error={tried && !scopeId ? 'Choose a key' : form.at('scopeId')}
          testId="new-budget-target"
        />
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
          error={tried && !scopeId ? `Choose a ${SCOPE_LABELS[scope].toLowerCase()}` : form.at('scopeId')}
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
            ? `${labelOf(existing)} already has a ${periodLabel(period)} budget: edit that one instead`
            : form.at('period')
        }
        data-testid="new-budget-period"
      />
      <LimitSettingsFields
        settings={settings}
        onChange={setSettings}
        errors={{
          limit: (tried || settings.limit !== '') && !limitOk ? BAD_LIMIT : form.at('limitMicros'),
          mode: form.at('mode'),
          thresholds: alertThresholds === null ? BAD_THRESHOLDS : form.at('alertThresholds'),
        }}
        testIds={{ limit: 'new-budget-limit', mode: 'new-budget-mode', thresholds: 'new-budget-thresholds' }}
      />
      {target && micros !== null && (
        <ParentWarning
          parents={parentsBelow(
            { scope, scopeId: target, period, limitMicros: String(micros) },
            scope === 'KEY' && chosenKey ? chosenKey : undefined,
          )}
          labelOf={labelOf}
        />
      )}
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Create budget"
        submitTestId="new-budget-submit"
        busy={form.busy}
        disabled={!!existing}
        onCancel={onClose}
      />
    </FormModal>
  );
}
