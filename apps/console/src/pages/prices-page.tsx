import { Badge, Button, Card, Group, Stack, Switch, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { PriceRule } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { toMicros } from '../lib/money';
import { formatTimestamp } from '../lib/dates';
import { errorAt } from '../lib/field-errors';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';
import { sortableHeads, sortedBy, useTableSort } from '../components/sortable-th';
import type { ColumnSpec } from '../lib/table-model';
import { CreatePriceModal, WhenFields, instantOf, isWhen } from './price-form-modal';

const STATE_COLORS: Record<PriceRule['state'], string> = {
  IN_FORCE: 'green.9',
  SCHEDULED: 'indigo.8',
  SUPERSEDED: 'gray.8',
  ENDED: 'red.9',
};

const PRICE_STATE_LABELS: Record<PriceRule['state'], string> = {
  IN_FORCE: 'in force',
  SCHEDULED: 'scheduled',
  SUPERSEDED: 'superseded',
  ENDED: 'ended',
};

export function PricesPage() {
  const { me, org } = useSession();
  const data = useLoad(async () => {
    const path = { orgId: org.id };
    const [rules, upstreams] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/prices/history', { params: { path } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/upstreams', { params: { path } })),
    ]);
    return { rules: [...rules].reverse(), upstreams };
  }, [org.id]);
  const [creating, setCreating] = useState(false);
  const [ending, setEnding] = useState<PriceRule | null>(null);
  const [showPast, setShowPast] = useState(true);
  const mayChange = me.role === 'ORG_ADMIN' || me.role === 'PLATFORM_ADMIN';
  const sorting = useTableSort();

  if (data.state === 'loading') return <LoadingState label="Loading prices…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="prices" onRetry={data.reload} />;
  const namespaces = new Map(data.data.upstreams.map((u) => [u.id, u.namespace]));
  const upstreamOf = (r: PriceRule) =>
    r.upstreamId ? (namespaces.get(r.upstreamId) ?? r.upstreamId) : 'Every upstream';
  // Times sort as their ISO text; "open-ended" (null) goes last either way.
  const columns: ColumnSpec<PriceRule>[] = [
    { id: 'upstream', header: 'Upstream', kind: 'text', value: upstreamOf },
    { id: 'tool', header: 'Tool pattern', kind: 'text', value: (r) => r.toolPattern },
    { id: 'perCall', header: 'Per call', kind: 'money', value: (r) => r.perCallMicros },
    { id: 'perToken', header: 'Per output token', kind: 'money', value: (r) => r.perOutputTokenMicros },
    { id: 'from', header: 'Effective from', kind: 'text', value: (r) => r.effectiveFrom },
    { id: 'until', header: 'Until', kind: 'text', value: (r) => r.effectiveUntil },
    { id: 'state', header: 'State', kind: 'text', value: (r) => PRICE_STATE_LABELS[r.state] },
  ];
  const th = sortableHeads(columns, sorting, 'prices');
  const shown = sortedBy(
    data.data.rules.filter((r) => showPast || r.state === 'IN_FORCE' || r.state === 'SCHEDULED'),
    columns,
    sorting,
  );

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group>
          <Switch
            label="Show ended and superseded rules"
            checked={showPast}
            onChange={(e) => setShowPast(e.currentTarget.checked)}
          />
          <Text size="sm" c="dimmed">
            Newest first (a header sorts); times in {org.timeZone}. Rules are never edited: a change is a new rule, or
            an end date.
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
            label="Price rules"
            head={
              <>
                {th('upstream')}
                {th('tool')}
                {th('perCall')}
                {th('perToken')}
                {th('from')}
                {th('until')}
                {th('state')}
                {mayChange && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {shown.map((r) => (
              <Table.Tr key={r.id} data-testid="price-row" data-rule-id={r.id}>
                <Table.Td>{upstreamOf(r)}</Table.Td>
                <Table.Td>{r.toolPattern}</Table.Td>
                <Table.Td>
                  <Money micros={r.perCallMicros} />
                </Table.Td>
                <Table.Td>
                  <Money micros={r.perOutputTokenMicros} />
                  {toMicros(r.perOutputTokenMicros) > 0n && (
                    <Text size="xs" c="dimmed" data-testid="price-per-million">
                      <Money micros={toMicros(r.perOutputTokenMicros) * 1_000n} /> per 1K ·{' '}
                      <Money micros={toMicros(r.perOutputTokenMicros) * 1_000_000n} /> per 1M tokens
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{formatTimestamp(r.effectiveFrom, org.timeZone)}</Table.Td>
                <Table.Td>{r.effectiveUntil ? formatTimestamp(r.effectiveUntil, org.timeZone) : 'open-ended'}</Table.Td>
                <Table.Td>
                  <Badge variant="outline" color={STATE_COLORS[r.state]} c="var(--tg-strong)" data-testid="price-state">
                    {PRICE_STATE_LABELS[r.state]}
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
          rules={data.data.rules}
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

function EndPriceModal({ rule, onClose, onEnded }: { rule: PriceRule; onClose: () => void; onEnded: () => void }) {
  const { org } = useSession();
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
        await answer(
          adminApi.POST('/v1/orgs/{orgId}/prices/{ruleId}/end', {
            params: { path: { orgId: org.id, ruleId: rule.id } },
            body: day ? { effectiveUntil: instantOf(day, time, org.timeZone) } : {},
          }),
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
