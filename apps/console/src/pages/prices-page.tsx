import { Badge, Button, Card, Group, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { FormEvent, useState } from 'react';
import { get, post, toApiError } from '../api/admin-client';
import type { PriceRule, Upstream } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { decimalToMicros } from '../lib/money-input';
import { dayIn, formatTimestamp, isDay } from '../lib/dates';
import { errorAt, useFieldErrors } from '../lib/field-errors';
import { useLoad } from '../lib/use-load';
import { zonedToUtc } from '../lib/zoned-time';
import { useOrgPath, useSession } from '../session';
import { DataTable } from '../components/data-table';

const STATE_COLORS: Record<PriceRule['state'], string> = {
  IN_FORCE: 'green.9',
  SCHEDULED: 'indigo.8',
  SUPERSEDED: 'gray.8',
  ENDED: 'red.9',
};

export function PricesPage() {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const data = useLoad(async () => {
    const [rules, upstreams] = await Promise.all([
      get<PriceRule[]>(`${orgPath}/prices/history`),
      get<Upstream[]>(`${orgPath}/upstreams`),
    ]);
    return { rules: [...rules].reverse(), upstreams };
  }, [orgPath]);
  const [creating, setCreating] = useState(false);
  const [ending, setEnding] = useState<PriceRule | null>(null);
  const [showPast, setShowPast] = useState(true);
  const mayChange = me.role === 'ORG_ADMIN' || me.role === 'PLATFORM_ADMIN';

  if (data.state === 'loading') return <LoadingState label="Loading prices…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="prices" onRetry={data.reload} />;
  const namespaces = new Map(data.data.upstreams.map((u) => [u.id, u.namespace]));
  const shown = data.data.rules.filter((r) => showPast || r.state === 'IN_FORCE' || r.state === 'SCHEDULED');

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group>
          <Switch
            label="Show ended and superseded rules"
            checked={showPast}
            onChange={(e) => setShowPast(e.currentTarget.checked)}
          />
          <Text size="sm" c="gray.8">
            Newest first; times in {org.timeZone}. Rules are never edited: a change is a new rule, or an end date.
          </Text>
        </Group>
        {mayChange && (
          <Button onClick={() => setCreating(true)} data-testid="new-price">
            New price rule
          </Button>
        )}
      </Group>
      <Card withBorder p={0}>
        {shown.length === 0 ? (
          <EmptyState title={data.data.rules.length === 0 ? 'No prices yet' : 'No rule in force'}>
            {data.data.rules.length === 0
              ? 'Without a price rule, calls are free and budgets never fill.'
              : 'Show ended and superseded rules to see the history.'}
          </EmptyState>
        ) : (
          <DataTable
            striped
            data-testid="prices-table"
            minWidth={1000}
            head={
              <>
                <Table.Th>Upstream</Table.Th>
                <Table.Th>Tool pattern</Table.Th>
                <Table.Th>Per call</Table.Th>
                <Table.Th>Per output token</Table.Th>
                <Table.Th>Effective from</Table.Th>
                <Table.Th>Until</Table.Th>
                <Table.Th>State</Table.Th>
                {mayChange && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {shown.map((r) => (
              <Table.Tr key={r.id} data-testid="price-row" data-rule-id={r.id}>
                <Table.Td>{r.upstreamId ? (namespaces.get(r.upstreamId) ?? r.upstreamId) : 'Every upstream'}</Table.Td>
                <Table.Td>{r.toolPattern}</Table.Td>
                <Table.Td>
                  <Money micros={r.perCallMicros} />
                </Table.Td>
                <Table.Td>
                  <Money micros={r.perOutputTokenMicros} />
                </Table.Td>
                <Table.Td>{formatTimestamp(r.effectiveFrom, org.timeZone)}</Table.Td>
                <Table.Td>{r.effectiveUntil ? formatTimestamp(r.effectiveUntil, org.timeZone) : 'open-ended'}</Table.Td>
                <Table.Td>
                  <Badge variant="outline" color={STATE_COLORS[r.state]} c="dark.9" data-testid="price-state">
                    {r.state.replace('_', ' ').toLowerCase()}
                  </Badge>
                </Table.Td>
                {mayChange && (
                  <Table.Td>
                    {r.state !== 'ENDED' && (
                      <RowAction
                        danger
                        onClick={() => setEnding(r)}
                        aria-label={`End the rule ${r.toolPattern} of ${r.upstreamId ? namespaces.get(r.upstreamId) : 'every upstream'}`}
                      >
                        End
                      </RowAction>
                    )}
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </Card>
      {creating && (
        <CreatePriceModal
          upstreams={data.data.upstreams}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            data.reload();
          }}
        />
      )}
      {ending && (
        <EndPriceModal
          rule={ending}
          onClose={() => setEnding(null)}
          onEnded={() => {
            setEnding(null);
            data.reload();
          }}
        />
      )}
    </Stack>
  );
}

/** A day and time in the org's zone, or empty for "now": the ISO instant the API takes. */
function instantOf(day: string, time: string, timeZone: string): string | undefined {
  return day ? zonedToUtc(day, time || '00:00', timeZone).toISOString() : undefined;
}

/** Empty (now), or a day with an optional HH:MM: what instantOf can read. */
function isWhen(day: string, time: string): boolean {
  return !day || (isDay(day) && (!time || /^\d{2}:\d{2}$/.test(time)));
}

/** The day and time inputs; a malformed entry shows the expected format, else the API's refusal. */
function WhenFields({
  day,
  time,
  setDay,
  setTime,
  what,
  apiError,
}: {
  day: string;
  time: string;
  setDay: (v: string) => void;
  setTime: (v: string) => void;
  what: string;
  apiError?: string;
}) {
  const { org } = useSession();
  const error = isWhen(day, time) ? apiError : 'A day as YYYY-MM-DD and a time as HH:MM';
  return (
    <Group grow align="flex-start">
      <TextInput
        label={`${what}: day`}
        description={`Empty: now. In ${org.timeZone}, e.g. ${dayIn(org.timeZone)}`}
        placeholder="YYYY-MM-DD"
        value={day}
        onChange={(e) => setDay(e.currentTarget.value)}
        error={error}
        data-testid="when-day"
      />
      <TextInput
        label={`${what}: time`}
        description="HH:MM, 24-hour"
        placeholder="00:00"
        value={time}
        onChange={(e) => setTime(e.currentTarget.value)}
        data-testid="when-time"
      />
    </Group>
  );
}

function CreatePriceModal({
  upstreams,
  onClose,
  onCreated,
}: {
  upstreams: Upstream[];
  onClose: () => void;
  onCreated: () => void;
}) {
  const { org, currency } = useSession();
  const orgPath = useOrgPath();
  const [upstreamId, setUpstreamId] = useState<string | null>(upstreams[0]?.id ?? null);
  const [pattern, setPattern] = useState('*');
  const [perCall, setPerCall] = useState('');
  const [perToken, setPerToken] = useState('0');
  const [chargeFailed, setChargeFailed] = useState(false);
  const [day, setDay] = useState('');
  const [time, setTime] = useState('');
  const errors = useFieldErrors([
    'upstreamId',
    'toolPattern',
    'perCallMicros',
    'perOutputTokenMicros',
    'effectiveFrom',
  ]);
  const [busy, setBusy] = useState(false);
  const callMicros = decimalToMicros(perCall);
  const tokenMicros = decimalToMicros(perToken);
  const whenOk = isWhen(day, time);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (callMicros === null || tokenMicros === null || !whenOk) return;
    setBusy(true);
    errors.setError(null);
    try {
      await post(`${orgPath}/prices`, {
        ...(upstreamId && upstreamId !== 'ALL' ? { upstreamId } : {}),
        toolPattern: pattern.trim(),
        perCallMicros: Number(callMicros),
        perOutputTokenMicros: Number(tokenMicros),
        chargeFailedCalls: chargeFailed,
        ...(day ? { effectiveFrom: instantOf(day, time, org.timeZone) } : {}),
      });
      onCreated();
    } catch (err) {
      errors.setError(toApiError(err));
      setBusy(false);
    }
  }
  return (
    <FormModal title="New price rule" size="lg" onClose={onClose} onSubmit={submit}>
      <Select
        label="Upstream"
        data={[
          { value: 'ALL', label: 'Every upstream' },
          ...upstreams.map((u) => ({ value: u.id, label: u.namespace })),
        ]}
        value={upstreamId}
        onChange={setUpstreamId}
        allowDeselect={false}
        error={errors.at('upstreamId')}
        data-testid="price-upstream"
      />
      <TextInput
        label="Tool pattern"
        description="A glob over tool names: *, search_*, echo"
        value={pattern}
        onChange={(e) => setPattern(e.currentTarget.value)}
        error={errors.at('toolPattern')}
        data-testid="price-pattern"
      />
      <Group grow align="flex-start">
        <TextInput
          label={`Per call (${currency})`}
          description="Up to six decimals"
          value={perCall}
          onChange={(e) => setPerCall(e.currentTarget.value)}
          error={perCall && callMicros === null ? 'An amount such as 0.0025' : errors.at('perCallMicros')}
          data-testid="price-per-call"
        />
        <TextInput
          label={`Per output token (${currency})`}
          description="e.g. 0.000003"
          value={perToken}
          onChange={(e) => setPerToken(e.currentTarget.value)}
          error={tokenMicros === null ? 'An amount such as 0.000003' : errors.at('perOutputTokenMicros')}
        />
      </Group>
      <Switch
        label="Charge failed calls"
        checked={chargeFailed}
        onChange={(e) => setChargeFailed(e.currentTarget.checked)}
      />
      <WhenFields
        day={day}
        time={time}
        setDay={setDay}
        setTime={setTime}
        what="Effective from"
        apiError={errors.at('effectiveFrom')}
      />
      <FormError error={errors.elsewhere} />
      <FormActions
        submitLabel="Add rule"
        submitTestId="price-submit"
        busy={busy}
        disabled={callMicros === null || !perCall || tokenMicros === null || !pattern.trim() || !whenOk}
        onCancel={onClose}
      />
    </FormModal>
  );
}

function EndPriceModal({ rule, onClose, onEnded }: { rule: PriceRule; onClose: () => void; onEnded: () => void }) {
  const { org } = useSession();
  const orgPath = useOrgPath();
  const [day, setDay] = useState('');
  const [time, setTime] = useState('');
  const whenOk = isWhen(day, time);
  return (
    <ConfirmModal
      title={`End the rule ${rule.toolPattern}?`}
      confirmLabel={day ? 'End from that time' : 'End now'}
      testId="confirm-end-price"
      confirmDisabled={!whenOk}
      fieldsShown={['effectiveUntil']}
      onClose={onClose}
      onConfirm={async () => {
        await post(
          `${orgPath}/prices/${rule.id}/end`,
          day ? { effectiveUntil: instantOf(day, time, org.timeZone) } : {},
        );
        onEnded();
      }}
    >
      {(error) => (
        <>
          <Text size="sm">
            From then on, calls take the next rule in line, or are free. Calls before keep this price. An end may not be
            in the past.
          </Text>
          <WhenFields
            day={day}
            time={time}
            setDay={setDay}
            setTime={setTime}
            what="End from"
            apiError={errorAt(error, 'effectiveUntil')}
          />
        </>
      )}
    </ConfirmModal>
  );
}
