import { Card, Code, Stack, Table, Text, Title } from '@mantine/core';
import type { CatalogTool, PriceRule, Upstream } from '../api/governance-types';
import { Money } from '../components/money-text';
import { EmptyState } from '../components/page-states';
import { priceFor } from '../lib/price-match';
import { ReviewBadge } from './tool-review-queue';
import { DataTable } from '../components/data-table';
import { tierLabel } from '../lib/labels';

export function UpstreamTools({
  upstream,
  tools,
  prices,
}: {
  upstream: Upstream;
  tools: CatalogTool[];
  prices: PriceRule[];
}) {
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        Tools of {upstream.namespace}
      </Title>
      <Card withBorder p={0}>
        {tools.length === 0 ? (
          <EmptyState title="No tools catalogued">
            {upstream.lastSyncAt ? 'The upstream listed no tools at its last sync.' : 'The first sync has not run yet.'}
          </EmptyState>
        ) : (
          <DataTable
            striped
            data-testid="tools-table"
            minWidth={900}
            label="Tools"
            head={
              <>
                <Table.Th>Tool (as agents see it)</Table.Th>
                <Table.Th>Price per call</Table.Th>
                <Table.Th>Per output token</Table.Th>
                <Table.Th>Tier</Table.Th>
                <Table.Th>Tokens: schema / summary / stub</Table.Th>
                <Table.Th>Review</Table.Th>
              </>
            }
          >
            {tools.map((t) => {
              const rule = priceFor(prices, t.upstreamId, t.name);
              return (
                <Table.Tr key={t.id} data-testid="tool-row">
                  <Table.Td>
                    <Code>{t.exposedName}</Code>
                    {/* What agents get is the approved definition; a pending change is in the review queue. */}
                    {t.servedDescription && (
                      <Text
                        size="xs"
                        c="dimmed"
                        lineClamp={2}
                        title={t.servedDescription}
                        data-testid="tool-description"
                      >
                        {t.servedDescription}
                      </Text>
                    )}
                    {t.reviewStatus === 'PENDING' && (
                      <Text size="xs" c="var(--tg-warn)" data-testid="tool-pending-note">
                        {t.pinnedHash
                          ? 'A changed definition waits for review; agents still get the approved one.'
                          : 'New: hidden from agents until approved.'}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    {rule ? (
                      <Money micros={rule.perCallMicros} testId="tool-price" />
                    ) : (
                      <Text size="sm">Free (no rule)</Text>
                    )}
                  </Table.Td>
                  <Table.Td>{rule ? <Money micros={rule.perOutputTokenMicros} /> : '—'}</Table.Td>
                  <Table.Td>{tierLabel(t.tier)}</Table.Td>
                  <Table.Td style={{ fontVariantNumeric: 'tabular-nums' }}>
                    {t.schemaTokens} / {t.summaryTokens} / {t.stubTokens}
                  </Table.Td>
                  <Table.Td>
                    <ReviewBadge status={t.reviewStatus} />
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </DataTable>
        )}
      </Card>
    </Stack>
  );
}
