import { Button, Card, Group, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { type Budget, type BudgetScope } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { DataTable } from '../components/data-table';
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
  const orgPath = useOrgPath();
  const data = useLoad<BudgetsData>(async () => {
    // Both lists come scoped to the caller's role by the API (a team admin: its team's and its keys').
    const [budgets, usage, teams, users, keys] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/budgets', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/reports/budgets', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/keys', { params: { path: { orgId: org.id } } })),
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
      keyPlaces: new Map(keys.map((k) => [k.id, { teamId: k.teamId, userId: k.userId }])),
      targets,
    };
  }, [orgPath]);
  // Its own load: without it the budgets still show, only "blocking now" does not.
  const blockingLoad = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/reports/refusals/blocking', { params: { path: { orgId: org.id } } })),
    [orgPath],
  );
  const blocking = new Map(
    blockingLoad.state === 'ready' ? blockingLoad.data.budgets.map((b) => [b.budgetId, b.refusedCalls]) : [],
  );
  const [scope, setScope] = useState<'ALL' | BudgetScope>('ALL');
  const [editing, setEditing] = useState<Budget | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const mayEdit = canManageOrg(me.role);

  if (data.state === 'loading') return <LoadingState label="Loading budgets…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="budgets" onRetry={data.reload} />;
  const { budgets, usage, names, targets, keyPlaces } = data.data;
  const labelOf = (b: Budget) => `${SCOPE_LABELS[b.scope]} ${names.get(b.scopeId) ?? b.scopeId}`;
  const parentsBelow = (b: BudgetLimit) => lowerParents(b, budgets, org.id, keyPlaces) as Budget[];
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
          parentsBelow={(b) => lowerParents(b, budgets, org.id, keyPlaces) as Budget[]}
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
