import { Button, Card, Group, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { keysByIds } from '../lib/keys-by-ids';
import { type Budget, type BudgetScope } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { DataTable } from '../components/data-table';
import { sortableHeads, sortedBy, useTableSort } from '../components/sortable-th';
import type { ColumnSpec } from '../lib/table-model';
import { periodLabel } from '../lib/labels';
import { type BudgetLimit, lowerParents } from '../lib/budget-parents';
import { EditBudgetModal, CreateBudgetModal } from './budget-form-modals';
import {
  type BudgetsData,
  ModeBadge,
  ParentWarning,
  SCOPE_LABELS,
  SCOPE_ORDER,
  UtilisationBar,
} from './budget-display';

export function BudgetsPage() {
  const { me, org } = useSession();
  const data = useLoad<BudgetsData>(async () => {
    // Both lists come scoped to the caller's role by the API (a team admin: its team's and its keys').
    const [budgets, usage, teams, users] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/budgets', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/reports/budgets', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
    ]);
    // Only the keys that have a budget, looked up by id: not every key of the org (10,000 on the bench).
    const keys = await keysByIds(
      org.id,
      budgets.filter((b) => b.scope === 'KEY').map((b) => b.scopeId),
    );
    const names = scopeNames({ org, teams, users, keys });
    budgets.sort(
      (a, b) =>
        SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope) ||
        (names.get(a.scopeId) ?? '').localeCompare(names.get(b.scopeId) ?? ''),
    );
    const byLabel = (a: { label: string }, b: { label: string }) => a.label.localeCompare(b.label);
    // A key is chosen by a search of the API (KeyPicker), not from a list of them all.
    const targets = {
      TEAM: teams.map((t) => ({ value: t.id, label: t.name })).sort(byLabel),
      USER: users.map((u) => ({ value: u.id, label: u.name ? `${u.name} <${u.email}>` : u.email })).sort(byLabel),
    };
    return {
      budgets,
      usage: new Map(usage.map((u) => [u.budgetId, u])),
      names,
      keyPlaces: new Map(keys.map((k) => [k.id, { teamId: k.teamId, userId: k.userId }])),
      targets,
    };
  }, [org.id]);
  // Its own load: without it the budgets still show, only "blocking now" does not.
  const blockingLoad = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/reports/refusals/blocking', { params: { path: { orgId: org.id } } })),
    [org.id],
  );
  const blocking = new Map(
    blockingLoad.state === 'ready' ? blockingLoad.data.budgets.map((b) => [b.budgetId, b.refusedCalls]) : [],
  );
  const [scope, setScope] = useState<'ALL' | BudgetScope>('ALL');
  const [editing, setEditing] = useState<Budget | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const mayEdit = canManageOrg(me.role);
  const sorting = useTableSort();

  if (data.state === 'loading') return <LoadingState label="Loading budgets…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="budgets" onRetry={data.reload} />;
  const { budgets, usage, names, targets, keyPlaces } = data.data;
  const labelOf = (b: Budget) => `${SCOPE_LABELS[b.scope]} ${names.get(b.scopeId) ?? b.scopeId}`;
  const parentsBelow = (b: BudgetLimit) => lowerParents(b, budgets, org.id, keyPlaces) as Budget[];
  const columns: ColumnSpec<Budget>[] = [
    { id: 'scope', header: 'Scope', kind: 'text', value: labelOf },
    { id: 'period', header: 'Period', kind: 'text', value: (b) => periodLabel(b.period) },
    { id: 'mode', header: 'Mode', kind: 'text', value: (b) => b.mode },
    { id: 'utilisation', header: 'Utilisation', kind: 'count', value: (b) => usage.get(b.id)?.utilisationBp ?? null },
    { id: 'limit', header: 'Limit', kind: 'money', value: (b) => b.limitMicros },
    { id: 'alerts', header: 'Alerts at', kind: 'count', value: (b) => b.alertThresholds[0] ?? null },
  ];
  const shown = sortedBy(
    budgets.filter((b) => scope === 'ALL' || b.scope === scope),
    columns,
    sorting,
  );
  const th = sortableHeads(columns, sorting, 'budgets');

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
          <Text size="sm" c="dimmed">
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
            label="Budgets"
            head={
              <>
                {th('scope')}
                {th('period')}
                {th('mode')}
                {th('utilisation', { w: 320 })}
                {th('limit')}
                {th('alerts')}
                {mayEdit && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {shown.map((b) => {
              const u = usage.get(b.id);
              const label = labelOf(b);
              return (
                <Table.Tr key={b.id} data-testid="budget-line" data-budget-id={b.id}>
                  <Table.Td>
                    {label}
                    <ParentWarning parents={parentsBelow(b)} labelOf={labelOf} />
                  </Table.Td>
                  <Table.Td>{periodLabel(b.period)}</Table.Td>
                  <Table.Td>
                    <ModeBadge mode={b.mode} />
                  </Table.Td>
                  <Table.Td>
                    {u ? (
                      <UtilisationBar
                        usage={u}
                        label={label}
                        mode={b.mode}
                        thresholds={b.alertThresholds}
                        timeZone={org.timeZone}
                        refusedNow={blocking.get(b.id) ?? 0}
                      />
                    ) : (
                      <Text size="sm" c="dimmed">
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
          parentsBelow={(limitMicros) => parentsBelow({ ...editing, limitMicros })}
          labelOf={labelOf}
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
          parentsBelow={(b, key) =>
            lowerParents(b, budgets, org.id, key ? new Map([...keyPlaces, [key.id, key]]) : keyPlaces) as Budget[]
          }
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            data.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmModal
          title={`Delete the ${periodLabel(deleting.period)} budget of ${labelOf(deleting)}?`}
          confirmLabel="Delete budget"
          testId="confirm-delete-budget"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await answer(
              adminApi.DELETE('/v1/orgs/{orgId}/budgets/{budgetId}', {
                params: { path: { orgId: org.id, budgetId: deleting.id } },
              }),
            );
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
