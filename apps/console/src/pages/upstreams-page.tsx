import {
  Alert,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  List,
  Modal,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { ApiError, get, post, toApiError } from '../api/admin-client';
import type { BulkReviewResult, CatalogTool, PriceRule, ToolDiff, Upstream } from '../api/governance-types';
import { DefinitionDiff } from '../components/definition-diff';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { priceFor } from '../lib/price-match';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';

interface CatalogData {
  upstreams: Upstream[];
  tools: CatalogTool[];
  prices: PriceRule[];
}

const isAdmin = (role: string) => role === 'ORG_ADMIN' || role === 'PLATFORM_ADMIN';

export function UpstreamsPage() {
  const orgPath = useOrgPath();
  const data = useLoad<CatalogData>(async () => {
    const [upstreams, tools, prices] = await Promise.all([
      get<Upstream[]>(`${orgPath}/upstreams`),
      get<CatalogTool[]>(`${orgPath}/tools`),
      get<PriceRule[]>(`${orgPath}/prices/history`),
    ]);
    upstreams.sort((a, b) => a.namespace.localeCompare(b.namespace));
    return { upstreams, tools, prices };
  }, [orgPath]);
  const [tab, setTab] = useState<string | null>('upstreams');

  if (data.state === 'loading') return <LoadingState label="Loading upstreams and tools…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="upstreams and tools" onRetry={data.reload} />;
  const pending = data.data.tools.filter((t) => t.reviewStatus === 'PENDING').length;

  return (
    <Tabs value={tab} onChange={setTab}>
      <Tabs.List>
        <Tabs.Tab value="upstreams">Upstreams ({data.data.upstreams.length})</Tabs.Tab>
        <Tabs.Tab value="review" data-testid="review-tab">
          Review queue ({pending})
        </Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="upstreams" pt="md">
        <UpstreamsList data={data.data} reload={data.reload} />
      </Tabs.Panel>
      <Tabs.Panel value="review" pt="md">
        <ReviewQueue data={data.data} reload={data.reload} />
      </Tabs.Panel>
    </Tabs>
  );
}

function UpstreamsList({ data, reload }: { data: CatalogData; reload: () => void }) {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const [open, setOpen] = useState<string | null>(data.upstreams[0]?.id ?? null);
  const [syncError, setSyncError] = useState<ApiError | null>(null);
  const [syncing, setSyncing] = useState<string | null>(null);
  if (data.upstreams.length === 0) {
    return (
      <Card withBorder>
        <EmptyState title="No upstreams yet">
          Register an MCP server with POST /v1/orgs/:orgId/upstreams; its tools show here after the first sync.
        </EmptyState>
      </Card>
    );
  }
  async function sync(u: Upstream) {
    setSyncing(u.id);
    setSyncError(null);
    try {
      await post(`${orgPath}/upstreams/${u.id}/sync`);
    } catch (err) {
      setSyncError(toApiError(err));
    } finally {
      setSyncing(null);
      reload();
    }
  }
  const selected = data.upstreams.find((u) => u.id === open);
  return (
    <Stack gap="md">
      {syncError && (
        <Alert color="red" role="alert" title="Sync not started">
          {syncError.message}
        </Alert>
      )}
      <Card withBorder p={0}>
        <Table.ScrollContainer minWidth={900}>
          <Table data-testid="upstreams-table" verticalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Namespace</Table.Th>
                <Table.Th>Transport</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Last sync</Table.Th>
                <Table.Th>Tools</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.upstreams.map((u) => {
                const tools = data.tools.filter((t) => t.upstreamId === u.id);
                return (
                  <Table.Tr key={u.id} data-testid="upstream-row">
                    <Table.Td>
                      <Text fw={600}>{u.namespace}</Text>
                      {u.displayName && (
                        <Text size="xs" c="gray.8">
                          {u.displayName}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{u.transport}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        <Badge variant="outline" color={u.enabled ? 'green.9' : 'red.9'} c="dark.9">
                          {u.enabled ? 'Enabled' : 'Disabled'}
                        </Badge>
                        {u.syncPaused && (
                          <Badge variant="outline" color="orange.9" c="dark.9">
                            Sync paused
                          </Badge>
                        )}
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">
                        {u.lastSyncAt ? formatTimestamp(u.lastSyncAt, org.timeZone) : 'Never synced'}
                      </Text>
                      {u.lastSyncError && (
                        <Text size="sm" c="red.9" data-testid="sync-error">
                          Failed: {u.lastSyncError}
                        </Text>
                      )}
                      {u.lastSyncWarnings.length > 0 && (
                        <List size="xs" c="orange.9" data-testid="sync-warnings">
                          {u.lastSyncWarnings.map((w) => (
                            <List.Item key={w}>{w}</List.Item>
                          ))}
                        </List>
                      )}
                    </Table.Td>
                    <Table.Td>{tools.length}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        <Button
                          size="xs"
                          variant={open === u.id ? 'light' : 'subtle'}
                          onClick={() => setOpen(u.id)}
                          aria-label={`Show tools of ${u.namespace}`}
                        >
                          Tools
                        </Button>
                        {isAdmin(me.role) && (
                          <Button
                            size="xs"
                            variant="subtle"
                            loading={syncing === u.id}
                            onClick={() => void sync(u)}
                            aria-label={`Sync now: ${u.namespace}`}
                          >
                            Sync now
                          </Button>
                        )}
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>
      {selected && (
        <UpstreamTools
          upstream={selected}
          tools={data.tools.filter((t) => t.upstreamId === selected.id)}
          prices={data.prices}
        />
      )}
    </Stack>
  );
}

function UpstreamTools({ upstream, tools, prices }: { upstream: Upstream; tools: CatalogTool[]; prices: PriceRule[] }) {
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
          <Table.ScrollContainer minWidth={900}>
            <Table striped data-testid="tools-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Tool (as agents see it)</Table.Th>
                  <Table.Th>Price per call</Table.Th>
                  <Table.Th>Per output token</Table.Th>
                  <Table.Th>Tier</Table.Th>
                  <Table.Th>Tokens: schema / summary / stub</Table.Th>
                  <Table.Th>Review</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {tools.map((t) => {
                  const rule = priceFor(prices, t.upstreamId, t.name);
                  return (
                    <Table.Tr key={t.id} data-testid="tool-row">
                      <Table.Td>
                        <Code>{t.exposedName}</Code>
                        {t.description && (
                          <Text size="xs" c="gray.8" lineClamp={1}>
                            {t.description}
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
                      <Table.Td>{t.tier.toLowerCase()}</Table.Td>
                      <Table.Td style={{ fontVariantNumeric: 'tabular-nums' }}>
                        {t.schemaTokens} / {t.summaryTokens} / {t.stubTokens}
                      </Table.Td>
                      <Table.Td>
                        <ReviewBadge status={t.reviewStatus} />
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
    </Stack>
  );
}

function ReviewBadge({ status }: { status: CatalogTool['reviewStatus'] }) {
  const color = status === 'APPROVED' ? 'green.9' : status === 'PENDING' ? 'orange.9' : 'red.9';
  return (
    <Badge variant="outline" color={color} c="dark.9">
      {status.toLowerCase()}
    </Badge>
  );
}

function ReviewQueue({ data, reload }: { data: CatalogData; reload: () => void }) {
  const { me } = useSession();
  const orgPath = useOrgPath();
  const mayReview = isAdmin(me.role);
  const [upstreamId, setUpstreamId] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [viewing, setViewing] = useState<CatalogTool | null>(null);
  const [outcome, setOutcome] = useState<{ result: BulkReviewResult; decision: string } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const queue = data.tools.filter((t) => t.reviewStatus === 'PENDING' && (!upstreamId || t.upstreamId === upstreamId));
  const names = new Map(data.tools.map((t) => [t.id, t.exposedName]));

  /** Each decision carries the definitionHash the reviewer saw: a tool changed since comes back STALE. */
  async function decide(decision: 'APPROVE' | 'REJECT', tools: { id: string; definitionHash: string }[]) {
    setBusy(true);
    setError(null);
    try {
      const result = await post<BulkReviewResult>(`${orgPath}/tools/review`, {
        decisions: tools.map((t) => ({ toolId: t.id, decision, definitionHash: t.definitionHash })),
      });
      setOutcome({ result, decision });
      setSelected(new Set());
      setViewing(null);
      reload();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  }

  const chosen = queue.filter((t) => selected.has(t.id));
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Select
          label="Upstream"
          placeholder="All upstreams"
          clearable
          data={data.upstreams.map((u) => ({ value: u.id, label: u.namespace }))}
          value={upstreamId}
          onChange={(v) => {
            setUpstreamId(v);
            setSelected(new Set());
          }}
          w={240}
          data-testid="review-upstream"
        />
        {mayReview && (
          <Group>
            <Button
              disabled={chosen.length === 0}
              loading={busy}
              onClick={() => void decide('APPROVE', chosen)}
              data-testid="approve-selected"
            >
              Approve selected ({chosen.length})
            </Button>
            <Button
              color="red.9"
              variant="outline"
              disabled={chosen.length === 0}
              loading={busy}
              onClick={() => void decide('REJECT', chosen)}
            >
              Reject selected
            </Button>
          </Group>
        )}
      </Group>
      {outcome && <ReviewOutcome outcome={outcome} names={names} onClose={() => setOutcome(null)} />}
      {error && (
        <Alert color="red" role="alert" title="Review not applied">
          {error.message}
        </Alert>
      )}
      <Card withBorder p={0}>
        {queue.length === 0 ? (
          <EmptyState title="Nothing to review">
            New or changed tool definitions wait here when the organisation or upstream does not auto-approve them.
          </EmptyState>
        ) : (
          <Table data-testid="review-table">
            <Table.Thead>
              <Table.Tr>
                {mayReview && (
                  <Table.Th w={40}>
                    <Checkbox
                      aria-label="Select all"
                      checked={chosen.length === queue.length}
                      indeterminate={chosen.length > 0 && chosen.length < queue.length}
                      onChange={(e) =>
                        setSelected(e.currentTarget.checked ? new Set(queue.map((t) => t.id)) : new Set())
                      }
                    />
                  </Table.Th>
                )}
                <Table.Th>Tool</Table.Th>
                <Table.Th>Change</Table.Th>
                <Table.Th>Latest hash</Table.Th>
                <Table.Th>Diff</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {queue.map((t) => (
                <Table.Tr key={t.id} data-testid="review-row">
                  {mayReview && (
                    <Table.Td>
                      <Checkbox
                        aria-label={`Select ${t.exposedName}`}
                        checked={selected.has(t.id)}
                        onChange={(e) => {
                          const next = new Set(selected);
                          if (e.currentTarget.checked) next.add(t.id);
                          else next.delete(t.id);
                          setSelected(next);
                        }}
                      />
                    </Table.Td>
                  )}
                  <Table.Td>
                    <Code>{t.exposedName}</Code>
                  </Table.Td>
                  <Table.Td>{t.pinnedHash ? 'Changed definition' : 'New tool (hidden until approved)'}</Table.Td>
                  <Table.Td>
                    <Code>{t.definitionHash.slice(0, 12)}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="subtle"
                      onClick={() => setViewing(t)}
                      aria-label={`Show diff of ${t.exposedName}`}
                    >
                      Show diff
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Card>
      {viewing && (
        <DiffModal
          tool={viewing}
          mayReview={mayReview}
          busy={busy}
          onClose={() => setViewing(null)}
          onDecide={(decision, hash) => void decide(decision, [{ id: viewing.id, definitionHash: hash }])}
        />
      )}
    </Stack>
  );
}

function ReviewOutcome({
  outcome,
  names,
  onClose,
}: {
  outcome: { result: BulkReviewResult; decision: string };
  names: Map<string, string>;
  onClose: () => void;
}) {
  const { result, decision } = outcome;
  const stale = result.results.filter((r) => r.result !== 'APPLIED');
  return (
    <Alert
      color={stale.length ? 'orange' : 'green'}
      role={stale.length ? 'alert' : 'status'}
      withCloseButton
      closeButtonLabel="Dismiss"
      onClose={onClose}
      title={`${result.applied} ${decision === 'APPROVE' ? 'approved' : 'rejected'}${result.stale ? `, ${result.stale} stale` : ''}${result.notFound ? `, ${result.notFound} not found` : ''}`}
      data-testid="review-outcome"
      styles={{ title: { color: 'var(--mantine-color-dark-9)' } }}
    >
      {stale.length > 0 && (
        <Stack gap={4}>
          <Text size="sm" c="dark.9">
            These were left as they are: the upstream changed them after you looked. Open their diff again.
          </Text>
          {stale.map((r) => (
            <Group key={r.toolId} gap="xs">
              <Badge variant="outline" color="orange.9" c="dark.9">
                {r.result}
              </Badge>
              <Code>{names.get(r.toolId) ?? r.toolId}</Code>
            </Group>
          ))}
        </Stack>
      )}
    </Alert>
  );
}

function DiffModal({
  tool,
  mayReview,
  busy,
  onClose,
  onDecide,
}: {
  tool: CatalogTool;
  mayReview: boolean;
  busy: boolean;
  onClose: () => void;
  onDecide: (d: 'APPROVE' | 'REJECT', hash: string) => void;
}) {
  const orgPath = useOrgPath();
  const diff = useLoad<ToolDiff>(() => get<ToolDiff>(`${orgPath}/tools/${tool.id}/diff`), [orgPath, tool.id]);
  return (
    <Modal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title={`Review ${tool.exposedName}`}
      size="xl"
    >
      {diff.state === 'loading' && <LoadingState label="Loading the diff…" />}
      {diff.state === 'error' && <ErrorState error={diff.error} what="the diff" onRetry={diff.reload} />}
      {diff.state === 'ready' && (
        <Stack>
          <DefinitionDiff diff={diff.data} />
          {mayReview && (
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button
                color="red.9"
                variant="outline"
                loading={busy}
                onClick={() => onDecide('REJECT', diff.data.definitionHash)}
                data-testid="diff-reject"
              >
                Reject
              </Button>
              <Button
                loading={busy}
                onClick={() => onDecide('APPROVE', diff.data.definitionHash)}
                data-testid="diff-approve"
              >
                Approve this definition
              </Button>
            </Group>
          )}
        </Stack>
      )}
    </Modal>
  );
}
