import { Anchor, Card, Group, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { adminApi, answer } from '../api/admin-client';
import { DataTable } from './data-table';
import { EmptyState, ErrorState, LoadingState } from './page-states';
import type { DayRange } from '../lib/date-ranges';
import { refusalLabel } from '../lib/refusal-codes';
import { PAGE_PATHS, navigate } from '../lib/router';
import { useLoad } from '../lib/use-load';

/**
 * Refused calls in a range (GET …/reports/refusals, scoped by the API like the spend reports): the
 * total, per code, and the keys refused most, with a link to them in the call log. Loads on its own:
 * a failure shows here and leaves the rest of the page.
 */
export function RefusalsPanel({ orgId, range }: { orgId: string; range: DayRange }) {
  const q = `from=${range.from}&to=${range.to}`;
  const load = useLoad(async () => {
    const report = (groupBy: 'code' | 'key') =>
      answer(
        adminApi.GET('/v1/orgs/{orgId}/reports/refusals', {
          params: { path: { orgId }, query: { from: range.from, to: range.to, groupBy } },
        }),
      );
    const [byCode, byKey] = await Promise.all([report('code'), report('key')]);
    return { byCode, byKey };
  }, [orgId, q]);
  const logPath = (extra = '') => `${PAGE_PATHS.calls}?${q}&outcome=REFUSED${extra}`;
  return (
    <Card withBorder component="section" aria-labelledby="refusals-title" data-testid="overview-refusals">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h4" id="refusals-title">
          Refused calls
        </Title>
        {load.state === 'ready' && load.data.byCode.totalRefusedCalls > 0 && (
          <Anchor
            href={logPath()}
            size="sm"
            onClick={(e) => {
              e.preventDefault();
              navigate(logPath());
            }}
          >
            See them in the call log
          </Anchor>
        )}
      </Group>
      {load.state === 'loading' && <LoadingState label="Loading refused calls…" />}
      {load.state === 'error' && <ErrorState error={load.error} what="the refused calls" onRetry={load.reload} />}
      {load.state === 'ready' &&
        (load.data.byCode.totalRefusedCalls === 0 ? (
          <EmptyState title="No call refused in this range">
            Calls refused by a budget, a policy, a rate limit or for an unknown tool are counted here.
          </EmptyState>
        ) : (
          <>
            <Text mb="sm">
              <Text span fw={700} size="xl" data-testid="overview-refused-total">
                {load.data.byCode.totalRefusedCalls.toLocaleString()}
              </Text>{' '}
              calls refused in this range
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <DataTable
                data-testid="refusals-by-code"
                head={
                  <>
                    <Table.Th>Why</Table.Th>
                    <Table.Th ta="right">Refused</Table.Th>
                  </>
                }
              >
                {load.data.byCode.rows.map((r) => (
                  <Table.Tr key={r.code} data-code={r.code}>
                    <Table.Td>
                      <Anchor
                        href={logPath(`&code=${r.code}`)}
                        onClick={(e) => {
                          e.preventDefault();
                          navigate(logPath(`&code=${r.code}`));
                        }}
                      >
                        {refusalLabel(r.code ?? '')}
                      </Anchor>{' '}
                      <Text span size="xs" c="dimmed">
                        {r.code}
                      </Text>
                    </Table.Td>
                    <Table.Td ta="right">{r.refusedCalls.toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </DataTable>
              <DataTable
                data-testid="refusals-by-key"
                head={
                  <>
                    <Table.Th>Key refused most</Table.Th>
                    <Table.Th ta="right">Refused</Table.Th>
                  </>
                }
              >
                {load.data.byKey.rows.slice(0, 5).map((r) => (
                  <Table.Tr key={r.keyId}>
                    <Table.Td style={{ wordBreak: 'break-word' }}>
                      {r.keyName ?? r.keyId}{' '}
                      {r.keyPrefix && <Text span size="xs" c="dimmed">{`(${r.keyPrefix})`}</Text>}
                    </Table.Td>
                    <Table.Td ta="right">{r.refusedCalls.toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </DataTable>
            </SimpleGrid>
          </>
        ))}
    </Card>
  );
}
