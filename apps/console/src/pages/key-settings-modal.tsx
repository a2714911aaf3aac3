import { Button, Divider, Group, NumberInput, Select, Stack, TagsInput, Text, TextInput, Title } from '@mantine/core';
import { FormEvent, useState } from 'react';
import { adminApi, answer, toApiError } from '../api/admin-client';
import type { Key } from '../api/admin-types';
import { BUDGET_PERIODS, type Budget, type BudgetPeriod } from '../api/governance-types';
import { oneOf } from '../lib/choice';
import { FormActions, FormError } from '../components/form-actions';
import { Money } from '../components/money-text';
import { ErrorState, LoadingState } from '../components/page-states';
import { useFieldErrors } from '../lib/field-errors';
import { useFormSubmit } from '../lib/form-submit';
import { decimalToMicros } from '../lib/money-input';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { ConsoleModal } from '../components/console-modal';
import { periodLabel } from '../lib/labels';
import { dayIn } from '../lib/dates';
import { zonedToUtc } from '../lib/zoned-time';

const DISCLOSURE_OPTIONS = [
  { value: '', label: 'As the policy says' },
  { value: 'FULL', label: 'Full: every tool listed' },
  { value: 'PROGRESSIVE', label: 'Progressive: search, then load' },
  { value: 'CODE', label: 'Code: tools as a typed API' },
  { value: 'AUTO', label: 'Auto: by catalogue size' },
];
const DISCLOSURE_MODES = ['FULL', 'PROGRESSIVE', 'CODE', 'AUTO'] as const satisfies readonly NonNullable<
  Key['disclosureMode']
>[];
const MODES = ['HARD', 'SOFT'] as const satisfies readonly Budget['mode'][];

/** `2030-01-01T00:00:00.000Z` -> `2030-01-01` for a date input (the day in UTC, as it is sent back). */

const asApiError = (err: unknown) => toApiError(err);

/** Tags, disclosure mode and expiry (PATCH …/keys/:id), and the key's own budget and rate limits. */
export function KeySettingsModal({
  keyToEdit: k,
  onClose,
  onSaved,
}: {
  keyToEdit: Key;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { currency, org } = useSession();
  const [tags, setTags] = useState<string[]>(k.tags);
  const [disclosure, setDisclosure] = useState<Key['disclosureMode']>(k.disclosureMode ?? null);
  const [expires, setExpires] = useState(k.expiresAt ? dayIn(org.timeZone, new Date(k.expiresAt)) : '');
  const form = useFormSubmit(['tags', 'disclosureMode', 'expiresAt']);
  const path = { orgId: org.id, keyId: k.id };
  const limits = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/keys/{keyId}/limits', { params: { path } })),
    [org.id, k.id],
  );

  const save = form.onSubmit(async () => {
    await answer(
      adminApi.PATCH('/v1/orgs/{orgId}/keys/{keyId}', {
        params: { path },
        body: {
          tags,
          disclosureMode: disclosure,
          expiresAt: expires ? zonedToUtc(expires, '00:00', org.timeZone).toISOString() : null,
        },
      }),
    );
    onSaved();
    onClose();
  });

  return (
    <ConsoleModal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title={`Settings of ${k.name}`}
      size="lg"
    >
      <form onSubmit={save} noValidate>
        <Stack>
          <TagsInput
            label="Tags"
            description="Reports group and filter by them, e.g. project:atlas (Enter adds one)"
            value={tags}
            onChange={setTags}
            error={form.at('tags')}
            data-testid="key-tags"
          />
          <Select
            label="Disclosure mode"
            description="How the key's agent sees the tool catalogue"
            data={DISCLOSURE_OPTIONS}
            value={disclosure ?? ''}
            onChange={(v) => setDisclosure(DISCLOSURE_MODES.find((m) => m === v) ?? null)}
            allowDeselect={false}
            error={form.at('disclosureMode')}
            data-testid="key-disclosure"
          />
          <TextInput
            type="date"
            label="Expires on"
            description={`From the start of that day in ${org.timeZone}; empty for no expiry`}
            value={expires}
            onChange={(e) => setExpires(e.currentTarget.value)}
            error={form.at('expiresAt')}
            data-testid="key-expiry"
          />
          <FormError error={form.elsewhere} />
          <FormActions
            submitLabel="Save settings"
            submitTestId="key-settings-save"
            busy={form.busy}
            onCancel={onClose}
          />
        </Stack>
      </form>
      <Divider my="md" />
      <Title order={3} size="h5" mb="xs">
        Limits on this key
      </Title>
      {limits.state === 'loading' && <LoadingState label="Loading the key's limits…" />}
      {limits.state === 'error' && <ErrorState error={limits.error} what="the key's limits" onRetry={limits.reload} />}
      {limits.state === 'ready' && (
        <Stack gap="xs" data-testid="key-limits">
          {limits.data.budgets.length === 0 && limits.data.rateLimits.length === 0 && (
            <Text size="sm" c="dimmed">
              None of its own: the team's and the org's budgets and rate limits apply.
            </Text>
          )}
          {limits.data.budgets.map((b) => (
            <Text size="sm" key={b.id} data-testid="key-budget">
              Budget {periodLabel(b.period)}: <Money micros={b.limitMicros} /> ({b.mode === 'HARD' ? 'hard' : 'soft'})
            </Text>
          ))}
          {limits.data.rateLimits.map((r) => (
            <Text size="sm" key={r.id} data-testid="key-rate-limit">
              {r.toolPattern}: {r.callsPerWindow !== null ? `${r.callsPerWindow} calls per ${r.windowSeconds} s` : ''}
              {r.maxConcurrent !== null ? ` · at most ${r.maxConcurrent} at once` : ''}
            </Text>
          ))}
          <BudgetForm keyId={k.id} currency={currency} onSaved={limits.reload} />
          <RateLimitForm keyId={k.id} onSaved={limits.reload} />
        </Stack>
      )}
    </ConsoleModal>
  );
}

function BudgetForm({ keyId, currency, onSaved }: { keyId: string; currency: string; onSaved: () => void }) {
  const { org } = useSession();
  const [period, setPeriod] = useState<BudgetPeriod>('MONTH');
  const [mode, setMode] = useState<Budget['mode']>('HARD');
  const [amount, setAmount] = useState('');
  const [error, setError] = useState<string | null>(null);
  const micros = decimalToMicros(amount);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (micros === null) return setError(`Type an amount in ${currency}, e.g. 25 or 0.50`);
    if (micros > BigInt(Number.MAX_SAFE_INTEGER)) return setError('That amount is too large');
    setError(null);
    try {
      await answer(
        adminApi.PUT('/v1/orgs/{orgId}/keys/{keyId}/budget', {
          params: { path: { orgId: org.id, keyId } },
          body: { period, mode, limitMicros: Number(micros) },
        }),
      );
      setAmount('');
      onSaved();
    } catch (err) {
      setError(asApiError(err).message);
    }
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Set a budget on this key">
      <Group align="flex-end" gap="xs">
        <Select
          label="Budget period"
          data={BUDGET_PERIODS}
          value={period}
          onChange={(v) => setPeriod(oneOf(BUDGET_PERIODS, v, 'MONTH'))}
          allowDeselect={false}
          w={120}
        />
        <Select
          label="Mode"
          data={['HARD', 'SOFT']}
          value={mode}
          onChange={(v) => setMode(oneOf(MODES, v, 'HARD'))}
          allowDeselect={false}
          w={100}
        />
        <TextInput
          label={`Limit (${currency})`}
          value={amount}
          onChange={(e) => setAmount(e.currentTarget.value)}
          inputMode="decimal"
          w={140}
          error={error}
          data-testid="key-budget-amount"
        />
        <Button type="submit" variant="default" data-testid="key-budget-save">
          Set budget
        </Button>
      </Group>
    </form>
  );
}

function RateLimitForm({ keyId, onSaved }: { keyId: string; onSaved: () => void }) {
  const { org } = useSession();
  const [toolPattern, setToolPattern] = useState('*:*');
  const [calls, setCalls] = useState<number | string>(60);
  const [windowSeconds, setWindowSeconds] = useState<number | string>(60);
  const errors = useFieldErrors(['toolPattern', 'callsPerWindow', 'windowSeconds']);

  async function submit(e: FormEvent) {
    e.preventDefault();
    errors.setError(null);
    try {
      await answer(
        adminApi.POST('/v1/orgs/{orgId}/keys/{keyId}/rate-limits', {
          params: { path: { orgId: org.id, keyId } },
          body: { toolPattern, callsPerWindow: Number(calls), windowSeconds: Number(windowSeconds) },
        }),
      );
      onSaved();
    } catch (err) {
      errors.setError(asApiError(err));
    }
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Add a rate limit to this key">
      <Group align="flex-end" gap="xs">
        <TextInput
          label="Tools"
          value={toolPattern}
          onChange={(e) => setToolPattern(e.currentTarget.value)}
          w={140}
          error={errors.at('toolPattern')}
        />
        <NumberInput
          label="Calls"
          min={1}
          value={calls}
          onChange={setCalls}
          w={90}
          error={errors.at('callsPerWindow')}
          data-testid="key-rate-calls"
        />
        <NumberInput
          label="Per seconds"
          min={1}
          value={windowSeconds}
          onChange={setWindowSeconds}
          w={110}
          error={errors.at('windowSeconds')}
        />
        <Button type="submit" variant="default" data-testid="key-rate-save">
          Add rate limit
        </Button>
      </Group>
      {errors.elsewhere && (
        <Text c="var(--tg-danger)" size="sm" role="alert" mt={4}>
          {errors.elsewhere.message}
        </Text>
      )}
    </form>
  );
}
