import { Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { spendReport } from '../api/spend-report';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { SpendPerDayChart } from '../components/spend-chart';
import { dayIn, formatDay, formatTimestamp } from '../lib/dates';
import { formatRatio } from '../lib/money';
import { DEFAULT_PRESET, DayRange, presetOf, presetRange } from '../lib/date-ranges';
import { PreviousPeriod } from '../components/previous-period';
import { RangePicker } from '../components/range-picker';
import { UpdatedAgo } from '../components/updated-ago';
import { SpendScope, canReadSpend, spendScopeOf } from '../lib/roles';
import { DIMENSION_LABELS, topBy } from '../lib/spend-table';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { DataTable } from '../components/data-table';
import { periodLabel } from '../lib/labels';
import { RefusalsPanel } from '../components/refusals-panel';
import { BudgetRow, SCOPE_LABELS, TopList } from './overview-panels';

type StackBy = 'team' | 'user' | 'upstream' | 'tool';
/** How spend per day can be stacked for each scope: a team admin by member, a member by upstream or tool. */
const STACKS: Record<SpendScope, [StackBy, StackBy]> = {
  org: ['team', 'upstream'],
  team: ['user', 'upstream'],
  user: ['upstream', 'tool'],
};

/** The Overview compares the whole scope's spend: no filter. */
const NO_REPORT_FILTERS = {};

export function OverviewPage() {
  const { org, currency, me } = useSession();
  const scope = spendScopeOf(me.role);
  // Org alerts are the Audit level: a team admin or a member would only be refused them.
  const readsAlerts = canReadSpend(me.role);
  const today = dayIn(org.timeZone);
  // The same range picker and default (the month to date) as the explorer.
  const [range, setRange] = useState<DayRange>(() => presetRange(DEFAULT_PRESET, today));
  const q = `from=${range.from}&to=${range.to}`;
  const path = { orgId: org.id };
  const [stackBy, setStackBy] = useState<StackBy>(STACKS[scope][0]);

  // Each panel loads on its own: one failed report shows its error in its panel, the rest stays.
  const total = useLoad(() => spendReport(org.id, range), [org.id, q]);
  const budgetsLoad = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/reports/budgets', { params: { path } })),
    [org.id],
  );
  // Budgets refusing calls now (BUDGET_EXCEEDED in the last minutes): their forecast is not a future date.
  const blockingLoad = useLoad(
    () => answer(adminApi.GET('/v1/orgs/{orgId}/reports/refusals/blocking', { params: { path } })),
    [org.id],
  );
  const blocking = new Map(
    blockingLoad.state === 'ready' ? blockingLoad.data.budgets.map((b) => [b.budgetId, b.refusedCalls]) : [],
  );
  // A team admin's team by name (budgets come with their scope's name): without it the id shows.
  const namesLoad = useLoad(async () => {
    const teams = await answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path } })).catch(() => []);
    return scopeNames({ org, teams });
  }, [org.id]);
  // The API ranks: only the five costliest rows come back (`top`), whatever the org's size.
  const topTools = useLoad(
    async () => topBy(await spendReport(org.id, { ...range, groupBy: 'tool', top: 5 }), 'tool', 5),
    [org.id, q],
  );
  const topKeys = useLoad(
    async () => topBy(await spendReport(org.id, { ...range, groupBy: 'key', top: 5 }), 'key', 5),
    [org.id, q],
  );
  // A member's own usage has one user: no ranking of users.
  const topUsers = useLoad(
    async () =>
      scope === 'user' ? null : topBy(await spendReport(org.id, { ...range, groupBy: 'user', top: 5 }), 'user', 5),
    [org.id, q],
  );

  // Its own load: an alerts failure leaves the rest of the overview shown.
  const alerts = useLoad(async () => {
    if (!readsAlerts) return [];
    const all = await answer(adminApi.GET('/v1/orgs/{orgId}/alerts', { params: { path, query: { limit: 100 } } }));
    return all.filter((a) => dayIn(org.timeZone, new Date(a.createdAt)) >= range.from);
  }, [org.id, q]);

  // The chart's series come with a page of the report (`perDay`, summed by the API from every row, as
  // the explorer's): the rows of a month by day and member or tool run to thousands.
  const perDay = useLoad(async () => {
    const r = await spendReport(org.id, { ...range, groupBy: `day,${stackBy}`, limit: 1 });
    return { empty: (r.page?.totalRows ?? r.rows.length) === 0, chart: r.perDay ?? { series: [], days: [] } };
  }, [org.id, q, stackBy]);

  const names = namesLoad.state === 'ready' ? namesLoad.data : new Map<string, string>();
  const report = total.state === 'ready' ? total.data : null;
  const scopeShown = report?.scope?.kind ?? scope;
  const budgets = budgetsLoad.state === 'ready' ? budgetsLoad.data : [];

  return (
    <Stack gap="lg">
      <ScopeNote scope={scopeShown} teamName={names.get(report?.scope?.id ?? me.teamId ?? '')} />
      <Group justify="space-between" align="flex-end">
        <RangePicker range={range} today={today} timeZone={org.timeZone} onChange={setRange} testIdPrefix="overview" />
        <UpdatedAgo
          stamp={report}
          testId="overview-updated"
          onRefresh={() => {
            for (const l of [total, budgetsLoad, blockingLoad, topTools, topKeys, topUsers, alerts, perDay]) l.reload();
          }}
        />
      </Group>
      {total.state === 'loading' && <LoadingState label="Loading this month’s spend…" />}
      {total.state === 'error' && <ErrorState error={total.error} what="this month’s spend" onRetry={total.reload} />}
      {report && (
        <>
          <Text c="dimmed" size="sm" data-testid="overview-range">
            {formatDay(report.from)} to {formatDay(report.to)} · report days in {report.timeZone} · org time zone{' '}
            {org.timeZone}
          </Text>
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            <Kpi label={presetOf(range, today) === 'this-month' ? KPI_SPEND_LABELS[scopeShown] : 'Spend in this range'}>
              <Money micros={report.totals.costMicros} testId="overview-total-spend" />
              <PreviousPeriod
                range={range}
                filters={NO_REPORT_FILTERS}
                current={report.totals}
                testId="overview-previous"
                size="xs"
              />
            </Kpi>
            <Kpi label="Calls">
              <span data-testid="overview-calls">{report.totals.calls.toLocaleString()}</span>
            </Kpi>
            <Kpi label="Error rate">
              <span data-testid="overview-error-rate">
                {formatRatio(report.totals.errors, report.totals.calls) ?? '—'}
              </span>
              <Text size="xs" c="dimmed" component="span">
                {' '}
                ({report.totals.errors.toLocaleString()} of {report.totals.calls.toLocaleString()})
              </Text>
            </Kpi>
          </SimpleGrid>
        </>
      )}

      <RefusalsPanel orgId={org.id} range={range} />

      <Card withBorder component="section" aria-labelledby="budgets-title">
        <Title order={2} size="h4" id="budgets-title" mb="sm">
          Budgets this period
        </Title>
        {budgetsLoad.state === 'loading' && <LoadingState label="Loading budgets…" />}
        {budgetsLoad.state === 'error' && (
          <ErrorState error={budgetsLoad.error} what="the budgets" onRetry={budgetsLoad.reload} />
        )}
        {budgetsLoad.state === 'ready' &&
          (budgets.length === 0 ? (
            <EmptyState title={scopeShown === 'org' ? 'No budgets yet' : 'No budgets set for you'}>
              {scopeShown === 'org'
                ? 'Set one on the Budgets page (or PUT /v1/orgs/{orgId}/budgets); it shows here with its spend and a forecast.'
                : 'Budgets on your team, its members or keys show here with their spend and a forecast once an org admin sets them.'}
            </EmptyState>
          ) : (
            <Stack gap="md">
              {budgets.map((b) => (
                <BudgetRow
                  key={b.budgetId}
                  budget={b}
                  name={b.scopeName ?? b.scopeId}
                  refusedNow={blocking.get(b.budgetId) ?? 0}
                />
              ))}
            </Stack>
          ))}
      </Card>

      {readsAlerts && (
        <Card withBorder component="section" aria-labelledby="alerts-title" data-testid="overview-alerts">
          <Title order={2} size="h4" id="alerts-title" mb="sm">
            Alerts fired in this range
          </Title>
          {alerts.state === 'loading' && <LoadingState label="Loading alerts…" />}
          {alerts.state === 'error' && <ErrorState error={alerts.error} what="the alerts" onRetry={alerts.reload} />}
          {alerts.state === 'ready' &&
            (alerts.data.length === 0 ? (
              <EmptyState title="No alerts in this range">
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
                          ? `${SCOPE_LABELS[b.scope]} ${b.scopeName ?? b.scopeId} (${periodLabel(b.period)})`
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
          (perDay.data.empty ? (
            <EmptyState title="No spend this month yet">
              Governed calls through the edge appear here within seconds of the ledger recording them.
            </EmptyState>
          ) : (
            <SpendPerDayChart
              perDay={perDay.data.chart}
              currency={currency}
              title={`Spend per day, stacked by ${stackBy}`}
            />
          ))}
      </Card>

      <SimpleGrid cols={{ base: 1, md: scope === 'user' ? 2 : 3 }}>
        <TopList title="Top tools" rows={topTools} testId="top-tools" />
        <TopList title="Top keys" rows={topKeys} testId="top-keys" />
        {scope !== 'user' && <TopList title="Top users" rows={topUsers} testId="top-users" />}
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
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {children}
      </Text>
    </Card>
  );
}
