import { Badge, Card, Code, Group, Select, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Key } from '../api/admin-types';
import type { EffectivePolicy } from '../api/oversight-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';
import { keyStatusLabel } from '../lib/labels';
import { REFUSAL_LABELS, SCOPE_LABELS } from './policy-labels';

/** The effective policy of one key: every tool of the catalog, its price, or the rule that refused it. */
export function Simulator({ keys, names }: { keys: Key[]; names: Map<string, string> }) {
  const { org } = useSession();
  const [keyId, setKeyId] = useState<string | null>(null);
  const [refusedOnly, setRefusedOnly] = useState(false);
  const result = useLoad<EffectivePolicy | null>(
    async () =>
      keyId
        ? answer(
            adminApi.GET('/v1/orgs/{orgId}/keys/{keyId}/effective-policy', {
              params: { path: { orgId: org.id, keyId } },
            }),
          )
        : null,
    [org.id, keyId],
  );
  const tools =
    result.state === 'ready' && result.data ? result.data.tools.filter((t) => !refusedOnly || !t.callable) : [];
  return (
    <Card withBorder component="section" aria-labelledby="simulator-title">
      <Stack gap="md">
        <Title order={2} size="h4" id="simulator-title">
          Effective-policy simulator
        </Title>
        <Text size="sm" c="dimmed">
          What an agent with this key sees now, at what price, and for each refused tool the level and rule that refused
          it.
        </Text>
        <Group align="flex-end">
          <Select
            label="Key"
            placeholder={keys.length ? 'Choose a key' : 'No active key within reach'}
            searchable
            data={keys.map((k) => ({ value: k.id, label: names.get(k.id) ?? k.name }))}
            value={keyId}
            onChange={setKeyId}
            disabled={keys.length === 0}
            data-testid="simulator-key"
            w={320}
          />
          <Switch
            label="Refused tools only"
            checked={refusedOnly}
            onChange={(e) => setRefusedOnly(e.currentTarget.checked)}
          />
        </Group>
        {!keyId ? (
          <EmptyState title="Choose a key to simulate">
            Every tool of the served catalog shows, allowed or refused, as the edge would decide it.
          </EmptyState>
        ) : result.state === 'loading' ? (
          <LoadingState label="Evaluating the key's policy…" />
        ) : result.state === 'error' ? (
          <ErrorState error={result.error} what="the effective policy" onRetry={result.reload} />
        ) : result.data ? (
          <>
            <Group gap="lg" data-testid="simulator-summary">
              <Text size="sm">
                <b>{result.data.allowedTools}</b> allowed
              </Text>
              <Text size="sm">
                <b>{result.data.refusedTools}</b> refused
              </Text>
              <Text size="sm">Disclosure: {result.data.disclosure.mode}</Text>
              <Text size="sm">Key: {keyStatusLabel(result.data.keyStatus)}</Text>
            </Group>
            {result.data.tools.length === 0 ? (
              <EmptyState title="The catalog is empty">
                No upstream has served tools yet: sync an upstream first.
              </EmptyState>
            ) : (
              <DataTable
                striped
                data-testid="simulator-table"
                minWidth={800}
                label="Policy levels"
                head={
                  <>
                    <Table.Th>Tool</Table.Th>
                    <Table.Th>Decision</Table.Th>
                    <Table.Th>Price per call</Table.Th>
                    <Table.Th>Why refused</Table.Th>
                  </>
                }
              >
                {tools.map((t) => (
                  <Table.Tr key={t.exposedName} data-testid="simulator-row" data-tool={t.exposedName}>
                    <Table.Td>
                      <Code>{t.exposedName}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Badge variant="outline" color={t.callable ? 'green.9' : 'red.9'} c="var(--tg-strong)">
                        {t.callable ? 'Allowed' : 'Refused'}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      {t.price ? <Money micros={t.price.perCallMicros} /> : t.callable ? 'Free' : '—'}
                    </Table.Td>
                    <Table.Td data-testid="simulator-refusal">
                      {t.refusal ? (
                        <>
                          {REFUSAL_LABELS[t.refusal.reason] ?? t.refusal.reason}
                          {t.refusal.rule && (
                            <>
                              {' '}
                              <Code>{t.refusal.rule}</Code>
                            </>
                          )}
                          {t.refusal.scope &&
                            ` at ${SCOPE_LABELS[t.refusal.scope].toLowerCase()} level${t.refusal.scopeId ? ` (${names.get(t.refusal.scopeId) ?? t.refusal.scopeId})` : ''}`}
                        </>
                      ) : (
                        '—'
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </DataTable>
            )}
          </>
        ) : null}
      </Stack>
    </Card>
  );
}
