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
import { useEffect, useState } from 'react';
import { ApiError, get, post, send, toApiError } from '../api/admin-client';
import type { BulkReviewResult, CatalogTool, PriceRule, ToolDiff, Upstream } from '../api/governance-types';
import { ConfirmModal } from '../components/confirm-modal';
import { DefinitionDiff } from '../components/definition-diff';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { priceFor } from '../lib/price-match';
import { canManageOrg } from '../lib/roles';
import { syncErrorKind } from '../lib/sync-error-kind';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { EditUpstreamModal, RegisterUpstreamModal, type UpstreamDetail } from './upstream-form-modals';
import { DataTable } from '../components/data-table';

interface CatalogData {
  upstreams: UpstreamDetail[];
  tools: CatalogTool[];
  prices: PriceRule[];
}

export function UpstreamsPage() {
  const orgPath = useOrgPath();
  const data = useLoad<CatalogData>(async () => {
    const [upstreams, tools, prices] = await Promise.all([
      get<UpstreamDetail[]>(`${orgPath}/upstreams`),
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

type LifecycleAction = 'disable' | 'enable' | 'pause-sync' | 'resume-sync';
const ACTION_DONE: Record<LifecycleAction | 'delete' | 'sync', string> = {
  disable: 'disabled: its tools are hidden from every key',
  enable: 'enabled: its approved tools are served again',
  'pause-sync': 'sync paused',
  'resume-sync': 'sync resumed',
  delete: 'deleted',
  sync: 'sync queued',
};

/** What changes when a sync has run, failed or succeeded. */
const syncMark = (u: Pick<UpstreamDetail, 'lastSyncAt' | 'lastSyncError'>) => `${u.lastSyncAt}|${u.lastSyncError}`;

function UpstreamsList({ data, reload }: { data: CatalogData; reload: () => void }) {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const mayManage = canManageOrg(me.role);
  const [open, setOpen] = useState<string | null>(data.upstreams[0]?.id ?? null);
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [registering, setRegistering] = useState(false);
  const [editing, setEditing] = useState<UpstreamDetail | null>(null);
  const [confirming, setConfirming] = useState<{ upstream: UpstreamDetail; action: 'disable' | 'delete' } | null>(null);
  // After a register or "sync now", the page re-reads until the upstream's sync has run (a minute at most).
  const [watch, setWatch] = useState<{ id: string; since: string; until: number } | null>(null);
  useEffect(() => {
    if (!watch) return;
    const u = data.upstreams.find((x) => x.id === watch.id);
    if ((u && syncMark(u) !== watch.since) || Date.now() > watch.until) {
      setWatch(null);
      return;
    }
    const timer = setTimeout(reload, 1000);
    return () => clearTimeout(timer);
  }, [watch, data, reload]);

  const say = (u: UpstreamDetail, what: keyof typeof ACTION_DONE) =>
    setNotice({ ok: true, text: `${u.namespace}: ${ACTION_DONE[what]}.` });
  const refused = (u: UpstreamDetail, err: unknown) => {
    const e = toApiError(err);
    setNotice({
      ok: false,
      text:
        e.status === 412
          ? `${u.namespace} was changed by someone else meanwhile, so nothing was done. The list is reloaded: check it and try again.`
          : `${u.namespace}: ${e.message}`,
    });
  };

  /** Enable, disable, pause or resume, at the version shown (412 if it changed since). */
  async function lifecycle(u: UpstreamDetail, action: LifecycleAction) {
    setBusy(`${u.id}:${action}`);
    setNotice(null);
    try {
      await send('POST', `${orgPath}/upstreams/${u.id}/${action}`, undefined, { 'If-Match': `"${u.version}"` });
      say(u, action);
    } catch (err) {
      refused(u, err);
    } finally {
      setBusy(null);
      reload();
    }
  }

  async function sync(u: UpstreamDetail) {
    setBusy(`${u.id}:sync`);
    setNotice(null);
    try {
      await post(`${orgPath}/upstreams/${u.id}/sync`);
      say(u, 'sync');
      setWatch({ id: u.id, since: syncMark(u), until: Date.now() + 60_000 });
    } catch (err) {
      refused(u, err);
    } finally {
      setBusy(null);
      reload();
    }
  }

  const registerButton = mayManage && (
    <Group justify="flex-end">
      <Button onClick={() => setRegistering(true)} data-testid="register-upstream">
        Register an upstream
      </Button>
    </Group>
  );
  const modals = (
    <>
      {registering && (
        <RegisterUpstreamModal
          onClose={() => setRegistering(false)}
          onRegistered={(u) => {
            setRegistering(false);
            setOpen(u.id);
            setNotice({ ok: true, text: `${u.namespace} registered: its first sync is queued.` });
            setWatch({
              id: u.id,
              since: syncMark({ lastSyncAt: null, lastSyncError: null }),
              until: Date.now() + 60_000,
            });
            reload();
          }}
        />
      )}
      {editing && (
        <EditUpstreamModal
          upstream={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            reload();
          }}
        />
      )}
      {confirming?.action === 'disable' && (
        <ConfirmModal
          title={`Disable the upstream ${confirming.upstream.namespace}?`}
          confirmLabel="Disable upstream"
          testId="confirm-disable-upstream"
          onClose={() => setConfirming(null)}
          onConfirm={async () => {
            const u = confirming.upstream;
            setConfirming(null);
            await lifecycle(u, 'disable');
          }}
        >
          <Text size="sm">
            Its tools vanish from every key at once and calls to them are refused; no sync runs. Its tools, prices and
            spend are kept, and Enable serves its approved tools again.
          </Text>
        </ConfirmModal>
      )}
      {confirming?.action === 'delete' && (
        <ConfirmModal
          title={`Delete the upstream ${confirming.upstream.namespace}?`}
          confirmLabel="Delete upstream"
          testId="confirm-delete-upstream"
          onClose={() => setConfirming(null)}
          onConfirm={async () => {
            const u = confirming.upstream;
            try {
              await send('DELETE', `${orgPath}/upstreams/${u.id}`, undefined, { 'If-Match': `"${u.version}"` });
            } catch (err) {
              if (toApiError(err).status !== 412) throw err;
              setConfirming(null);
              refused(u, err);
              return reload();
            }
            setConfirming(null);
            if (open === u.id) setOpen(null);
            say(u, 'delete');
            reload();
          }}
        >
          <Text size="sm">
            Its {data.tools.filter((t) => t.upstreamId === confirming.upstream.id).length} tools are removed from every
            key, and its secrets and users’ connections are dropped. Spend already recorded stays in the reports under
            the name <Code>{confirming.upstream.namespace}</Code>, which is free to register again. This cannot be
            undone.
          </Text>
        </ConfirmModal>
      )}
    </>
  );

  if (data.upstreams.length === 0) {
    return (
      <Stack gap="md">
        {registerButton}
        <Card withBorder>
          <EmptyState title="No upstreams yet">
            {mayManage
              ? 'Register an MCP server; its tools show here after the first sync.'
              : 'An org admin registers MCP servers; their tools show here after the first sync.'}
          </EmptyState>
        </Card>
        {modals}
      </Stack>
    );
  }
  const selected = data.upstreams.find((u) => u.id === open);
  return (
    <Stack gap="md">
      {registerButton}
      {notice && (
        <Alert
          color={notice.ok ? 'green' : 'red'}
          role={notice.ok ? 'status' : 'alert'}
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setNotice(null)}
          data-testid="upstream-notice"
        >
          <Text size="sm" c="dark.9">
            {notice.text}
          </Text>
        </Alert>
      )}
      <Card withBorder p={0}>
        <DataTable
          data-testid="upstreams-table"
          verticalSpacing="sm"
          minWidth={1000}
          head={
            <>
              <Table.Th>Namespace</Table.Th>
              <Table.Th>Transport</Table.Th>
              <Table.Th miw={150}>State</Table.Th>
              <Table.Th>Last sync</Table.Th>
              <Table.Th>Tools</Table.Th>
              <Table.Th>Actions</Table.Th>
            </>
          }
        >
          {data.upstreams.map((u) => {
            const tools = data.tools.filter((t) => t.upstreamId === u.id);
            const isBusy = (a: string) => busy === `${u.id}:${a}`;
            return (
              <Table.Tr key={u.id} data-testid="upstream-row" data-namespace={u.namespace}>
                <Table.Td>
                  <Text fw={600}>{u.namespace}</Text>
                  {u.displayName && (
                    <Text size="xs" c="gray.8">
                      {u.displayName}
                    </Text>
                  )}
                  {u.url && (
                    <Text size="xs" c="gray.8" style={{ wordBreak: 'break-all' }} data-testid="upstream-row-url">
                      {u.url}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{u.transport}</Text>
                  <Text size="xs" c="gray.8">
                    auth: {u.authMode.toLowerCase().replace(/_/g, ' ')}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <Badge variant="outline" color={u.enabled ? 'green.9' : 'red.9'} c="dark.9">
                      {u.enabled ? 'Enabled' : 'Disabled'}
                    </Badge>
                    {u.syncPaused && (
                      <Badge variant="outline" color="orange.9" c="dark.9" data-testid="sync-paused">
                        Sync paused
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{u.lastSyncAt ? formatTimestamp(u.lastSyncAt, org.timeZone) : 'Never synced'}</Text>
                  {watch?.id === u.id && (
                    <Text size="xs" c="gray.8" role="status">
                      Sync queued…
                    </Text>
                  )}
                  {u.lastSyncError && (
                    <Text size="sm" c="red.9" data-testid="sync-error">
                      <Text span fw={600} data-testid="sync-error-kind">
                        {syncErrorKind(u.lastSyncError)}:
                      </Text>{' '}
                      {u.lastSyncError}
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
                <Table.Td data-testid="upstream-tool-count">{tools.length}</Table.Td>
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
                    {mayManage && (
                      <>
                        <RowAction
                          loading={isBusy('sync')}
                          disabled={!u.enabled}
                          onClick={() => void sync(u)}
                          aria-label={`Sync now: ${u.namespace}`}
                        >
                          Sync now
                        </RowAction>
                        <RowAction onClick={() => setEditing(u)} aria-label={`Edit ${u.namespace}`}>
                          Edit
                        </RowAction>
                        <RowAction
                          loading={isBusy(u.syncPaused ? 'resume-sync' : 'pause-sync')}
                          onClick={() => void lifecycle(u, u.syncPaused ? 'resume-sync' : 'pause-sync')}
                          aria-label={`${u.syncPaused ? 'Resume' : 'Pause'} sync of ${u.namespace}`}
                        >
                          {u.syncPaused ? 'Resume sync' : 'Pause sync'}
                        </RowAction>
                        {u.enabled ? (
                          <RowAction
                            danger
                            onClick={() => setConfirming({ upstream: u, action: 'disable' })}
                            aria-label={`Disable ${u.namespace}`}
                          >
                            Disable
                          </RowAction>
                        ) : (
                          <RowAction
                            loading={isBusy('enable')}
                            onClick={() => void lifecycle(u, 'enable')}
                            aria-label={`Enable ${u.namespace}`}
                          >
                            Enable
                          </RowAction>
                        )}
                        <RowAction
                          danger
                          onClick={() => setConfirming({ upstream: u, action: 'delete' })}
                          aria-label={`Delete ${u.namespace}`}
                        >
                          Delete
                        </RowAction>
                      </>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            );
          })}
        </DataTable>
      </Card>
      {selected && (
        <UpstreamTools
          upstream={selected}
          tools={data.tools.filter((t) => t.upstreamId === selected.id)}
          prices={data.prices}
        />
      )}
      {modals}
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
          <DataTable
            striped
            data-testid="tools-table"
            minWidth={900}
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
          </DataTable>
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
  const mayReview = canManageOrg(me.role);
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
          <DataTable
            data-testid="review-table"
            head={
              <>
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
              </>
            }
          >
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
                  <RowAction onClick={() => setViewing(t)} aria-label={`Show diff of ${t.exposedName}`}>
                    Show diff
                  </RowAction>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
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
