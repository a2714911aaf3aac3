import { Badge, Card, Group, Progress, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { get } from '../api/admin-client';
import type { BudgetUtilisation, Key, SpendReport, Team, User } from '../api/admin-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { dayIn, formatDay, formatTimestamp, monthStart } from '../lib/dates';
import { forecastBudget } from '../lib/forecast';
import { formatRatio, toMicros } from '../lib/money';
import { SpendScope, canReadSpend, spendScopeOf } from '../lib/roles';
import { DIMENSION_LABELS, Ranked, topBy } from '../lib/spend-table';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import type { BudgetAlert } from '../api/oversight-types';
import { DataTable } from '../components/data-table';

interface OverviewData {
  total: SpendReport;
  budgets: BudgetUtilisation[];
  tools: Ranked[];
  keys: Ranked[];
  users: Ranked[] | null;
  names: Map<string, string>;
}

type StackBy = 'team' | 'user' | 'upstream' | 'tool';
/** How spend per day can be stacked for each scope: a team admin by member, a member by upstream or tool. */
const STACKS: Record<SpendScope, [StackBy, StackBy]> = {
  org: ['team', 'upstream'],
  team: ['user', 'upstream'],
  user: ['upstream', 'tool'],
};

/** Month to date in the org's time zone: the period most budgets run over. */
function monthToDate(timeZone: string) {
  const to = dayIn(timeZone);
  return { from: monthStart(to), to };
}

export function OverviewPage() {
  const { org, currency, me } = useSession();
  const orgPath = useOrgPath();
  const scope = spendScopeOf(me.role);
  // Org alerts are the Audit level: a team admin or a member would only be refused them.
  const readsAlerts = canReadSpend(me.role);
  const range = monthToDate(org.timeZone);
  const q = `from=${range.from}&to=${range.to}`;
  const [stackBy, setStackBy] = useState<StackBy>(STACKS[scope][0]);

  const overview = useLoad<OverviewData>(async () => {
    const [total, budgets, tools, keysReport, usersReport, teams, users, keys] = await Promise.all([
      get<SpendReport>(`${orgPath}/reports/spend?${q}`),
      get<BudgetUtilisation[]>(`${orgPath}/reports/budgets`),
      get<SpendReport>(`${orgPath}/reports/spend?${q}&groupBy=tool`),
      get<SpendReport>(`${orgPath}/reports/spend?${q}&groupBy=key`),
      // A member's own usage has one user: no ranking of users.
      scope === 'user' ? Promise.resolve(null) : get<SpendReport>(`${orgPath}/reports/spend?${q}&groupBy=user`),
      get<Team[]>(`${orgPath}/teams`),
      get<User[]>(`${orgPath}/users`),
      get<Key[]>(`${orgPath}/keys`),
    ]);
    const names = scopeNames({ org, teams, users, keys });
    return {
      total,
      budgets,
      tools: topBy(tools, 'tool', 5),
      keys: topBy(keysReport, 'key', 5),
      users: usersReport && topBy(usersReport, 'user', 5),
      names,
    };
  }, [orgPath, q]);

  // Its own load: an alerts failure leaves the rest of the overview shown.
  const alerts = useLoad(async () => {
    if (!readsAlerts) return [];
    const all = await get<BudgetAlert[]>(`${orgPath}/alerts?limit=100`);
    return all.filter((a) => dayIn(org.timeZone, new Date(a.createdAt)) >= range.from);
  }, [orgPath, q]);

  const perDay = useLoad(
    () => get<SpendReport>(`${orgPath}/reports/spend?${q}&groupBy=day,${stackBy}`),
    [orgPath, q, stackBy],
  );

  if (overview.state === 'loading') return <LoadingState label="Loading this month’s spend…" />;
  if (overview.state === 'error')
    return <ErrorState error={overview.error} what="the overview" onRetry={overview.reload} />;
  const { total, budgets, names } = overview.data;
  const t = total.totals;
  const scopeShown = total.scope?.kind ?? scope;

  return (
    <Stack gap="lg">
      <ScopeNote scope={scopeShown} teamName={names.get(total.scope?.id ?? me.teamId ?? '')} />
      <Text c="gray.8" size="sm" data-testid="overview-range">
        {formatDay(total.from)} to {formatDay(total.to)} · report days in {total.timeZone} · org time zone{' '}
        {org.timeZone}
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Kpi label={KPI_SPEND_LABELS[scopeShown]}>
          <Money micros={t.costMicros} testId="overview-total-spend" />
        </Kpi>
        <Kpi label="Calls">
          <span data-testid="overview-calls">{t.calls.toLocaleString()}</span>
        </Kpi>
        <Kpi label="Error rate">
          <span data-testid="overview-error-rate">{formatRatio(t.errors, t.calls) ?? '—'}</span>
          <Text size="xs" c="gray.8" component="span">
            {' '}
            ({t.errors.toLocaleString()} of {t.calls.toLocaleString()})
          </Text>
        </Kpi>
      </SimpleGrid>

      <Card withBorder component="section" aria-labelledby="budgets-title">
        <Title order={2} size="h4" id="budgets-title" mb="sm">
          Budgets this period
        </Title>
        {budgets.length === 0 ? (
          <EmptyState title={scopeShown === 'org' ? 'No budgets yet' : 'No budgets set for you'}>
            {scopeShown === 'org'
              ? 'Set one on the Budgets page (or PUT /v1/orgs/{orgId}/budgets); it shows here with its spend and a forecast.'
              : 'Budgets on your team, its members or keys show here with their spend and a forecast once an org admin sets them.'}
          </EmptyState>
        ) : (
          <Stack gap="md">
            {budgets.map((b) => (
              <BudgetRow key={b.budgetId} budget={b} name={names.get(b.scopeId) ?? b.scopeId} />
            ))}
          </Stack>
        )}
      </Card>

      {readsAlerts && (
        <Card withBorder component="section" aria-labelledby="alerts-title" data-testid="overview-alerts">
          <Title order={2} size="h4" id="alerts-title" mb="sm">
            Alerts fired this month
          </Title>
          {alerts.state === 'loading' && <LoadingState label="Loading alerts…" />}
          {alerts.state === 'error' && <ErrorState error={alerts.error} what="the alerts" onRetry={alerts.reload} />}
          {alerts.state === 'ready' &&
            (alerts.data.length === 0 ? (
              <EmptyState title="No alerts this month">
                A budget crossing one of its thresholds (80 % and 100 % by default) shows here, with its webhook
                delivery.
              </EmptyState>
            ) : (
              <DataTable
                head={
                  <>
                    <Table.Th>When</Table.Th>
                    <Table.Th>Budget</Table.Th>
                    <Table.Th ta="right">Threshold</Table.Th>
                    <Table.Th ta="right">Spend then</Table.Th>
                    <Table.Th>Webhook</Table.Th>
                  </>
                }
              >
                {alerts.data.map((a) => {
                  const b = budgets.find((x) => x.budgetId === a.budgetId);
                  return (
                    <Table.Tr key={a.id} data-testid="alert-row">
                      <Table.Td>{formatTimestamp(a.createdAt, org.timeZone)}</Table.Td>
                      <Table.Td>
                        {b
                          ? `${SCOPE_LABELS[b.scope]} ${names.get(b.scopeId) ?? b.scopeId} (${b.period.toLowerCase()})`
                          : a.budgetId}
                      </Table.Td>
                      <Table.Td ta="right">{a.threshold} %</Table.Td>
                      <Table.Td ta="right">
                        <Money micros={a.spentMicros} />
                      </Table.Td>
                      <Table.Td>
                        {a.deliveredAt
                          ? 'Delivered'
                          : a.lastError
                            ? `Not delivered (${a.attempts} attempts): ${a.lastError}`
                            : a.attempts
                              ? `Retrying (${a.attempts} attempts)`
                              : 'Pending'}
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </DataTable>
            ))}
        </Card>
      )}

      <Card withBorder component="section" aria-labelledby="per-day-title">
        <Group justify="space-between" mb="sm">
          <Title order={2} size="h4" id="per-day-title">
            Spend per day
          </Title>
          <SegmentedControl
            aria-label="Stack the bars by"
            size="xs"
            value={stackBy}
            onChange={(v) => setStackBy(v as StackBy)}
            data={STACKS[scope].map((d) => ({ value: d, label: `By ${DIMENSION_LABELS[d].toLowerCase()}` }))}
          />
        </Group>
        {perDay.state === 'loading' && <LoadingState label="Loading spend per day…" />}
        {perDay.state === 'error' && <ErrorState error={perDay.error} what="spend per day" onRetry={perDay.reload} />}
        {perDay.state === 'ready' &&
          (perDay.data.rows.length === 0 ? (
            <EmptyState title="No spend this month yet">
              Governed calls through the edge appear here within seconds of the ledger recording them.
            </EmptyState>
          ) : (
            <SpendPerDayChart
              report={perDay.data}
              stackBy={stackBy}
              currency={currency}
              title={`Spend per day, stacked by ${stackBy}`}
            />
          ))}
      </Card>

      <SimpleGrid cols={{ base: 1, md: overview.data.users ? 3 : 2 }}>
        <TopList title="Top tools" rows={overview.data.tools} testId="top-tools" />
        <TopList title="Top keys" rows={overview.data.keys} testId="top-keys" />
        {overview.data.users && <TopList title="Top users" rows={overview.data.users} testId="top-users" />}
      </SimpleGrid>
    </Stack>
  );
}

const KPI_SPEND_LABELS: Record<SpendScope, string> = {
  org: 'Spend this month',
  team: 'Your team’s spend this month',
  user: 'Your spend this month',
};

function Kpi({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Card withBorder>
      <Text size="sm" c="gray.8">
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {children}
      </Text>
    </Card>
  );
}

const SCOPE_LABELS: Record<BudgetUtilisation['scope'], string> = {
  ORG: 'Organisation',
  TEAM: 'Team',
  USER: 'User',
  KEY: 'Key',
};

function BudgetRow({ budget: b, name }: { budget: BudgetUtilisation; name: string }) {
  const { org } = useSession();
  const bp = b.utilisationBp ?? 0;
  const pct = Math.min(100, bp / 100);
  const color = bp >= 10000 ? 'red' : bp >= 8000 ? 'orange' : 'indigo';
  const f = forecastBudget({
    limitMicros: b.limitMicros,
    spentMicros: toMicros(b.spentMicros) + toMicros(b.reservedMicros),
    periodStart: b.periodStart,
    resetsAt: b.resetsAt,
  });
  const forecast =
    f.kind === 'exhausted'
      ? 'Budget used up for this period.'
      : f.kind === 'no-spend'
        ? 'No spend yet this period.'
        : f.kind === 'runs-out'
          ? `At this rate the budget runs out on ${formatTimestamp(f.at, org.timeZone)}.`
          : f.resetsAt
            ? `At this rate it lasts until the period resets (${formatTimestamp(f.resetsAt, org.timeZone)}).`
            : 'At this rate it lasts.';
  const label = `${SCOPE_LABELS[b.scope]} ${name}`;
  return (
    <div data-testid="budget-row">
      <Group justify="space-between" gap="xs" mb={4}>
        <Group gap="xs">
          <Text fw={600}>{label}</Text>
          <Badge size="sm" variant="outline" color="gray.8" c="dark.9">
            {b.period.toLowerCase()}
          </Badge>
          <Badge size="sm" variant="outline" color={b.mode === 'HARD' ? 'red.8' : 'yellow.8'} c="dark.9">
            {b.mode === 'HARD' ? 'hard' : 'soft'}
          </Badge>
        </Group>
        <Text size="sm">
          <Money micros={toMicros(b.spentMicros)} /> of <Money micros={b.limitMicros} /> ({(bp / 100).toFixed(2)} %)
        </Text>
      </Group>
      <Progress value={pct} color={color} aria-label={`${label}: ${(bp / 100).toFixed(2)} % of the budget used`} />
      <Text size="xs" c="gray.8" mt={4} data-testid="budget-forecast">
        {forecast}
      </Text>
    </div>
  );
}

function TopList({ title, rows, testId }: { title: string; rows: Ranked[]; testId: string }) {
  return (
    <Card withBorder component="section" aria-label={title} data-testid={testId}>
      <Title order={2} size="h5" mb="xs">
        {title}
      </Title>
      {rows.length === 0 ? (
        <EmptyState title="No calls this month yet" />
      ) : (
        <DataTable
          head={
            <>
              <Table.Th>Name</Table.Th>
              <Table.Th ta="right">Calls</Table.Th>
              <Table.Th ta="right">Spend</Table.Th>
            </>
          }
        >
          {rows.map((r) => (
            <Table.Tr key={r.label}>
              <Table.Td style={{ wordBreak: 'break-word' }}>{r.label}</Table.Td>
              <Table.Td ta="right">{r.calls.toLocaleString()}</Table.Td>
              <Table.Td ta="right">
                <Money micros={r.costMicros} />
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      )}
    </Card>
  );
}
