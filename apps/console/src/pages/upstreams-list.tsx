import { Alert, Badge, Button, Card, Code, Group, List, Stack, Table, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { adminApi, answer, toApiError } from '../api/admin-client';
import { ConfirmModal } from '../components/confirm-modal';
import { EmptyState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { canManageOrg } from '../lib/roles';
import { syncErrorKind } from '../lib/sync-error-kind';
import { useSession } from '../session';
import { EditUpstreamModal } from './upstream-edit-modal';
import { RegisterUpstreamModal, type UpstreamDetail } from './upstream-form-modals';
import { UpstreamTools } from './upstream-tools-table';
import { DataTable } from '../components/data-table';
import { authModeLabel, transportLabel } from '../lib/labels';
import type { CatalogData } from './upstreams-page';

type LifecycleAction = 'disable' | 'enable' | 'pause-sync' | 'resume-sync';
/** Each change of an upstream's state, at the version shown (If-Match). */
function changeUpstream(u: UpstreamDetail, action: LifecycleAction) {
  const params = { path: { orgId: u.orgId, upstreamId: u.id }, header: { 'If-Match': `"${u.version}"` } };
  switch (action) {
    case 'disable':
      return answer(adminApi.POST('/v1/orgs/{orgId}/upstreams/{upstreamId}/disable', { params }));
    case 'enable':
      return answer(adminApi.POST('/v1/orgs/{orgId}/upstreams/{upstreamId}/enable', { params }));
    case 'pause-sync':
      return answer(adminApi.POST('/v1/orgs/{orgId}/upstreams/{upstreamId}/pause-sync', { params }));
    case 'resume-sync':
      return answer(adminApi.POST('/v1/orgs/{orgId}/upstreams/{upstreamId}/resume-sync', { params }));
  }
}
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

export function UpstreamsList({ data, reload }: { data: CatalogData; reload: () => void }) {
  const { me, org } = useSession();
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
      await changeUpstream(u, action);
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
      await answer(
        adminApi.POST('/v1/orgs/{orgId}/upstreams/{upstreamId}/sync', {
          params: { path: { orgId: u.orgId, upstreamId: u.id } },
        }),
      );
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
              await answer(
                adminApi.DELETE('/v1/orgs/{orgId}/upstreams/{upstreamId}', {
                  params: { path: { orgId: u.orgId, upstreamId: u.id }, header: { 'If-Match': `"${u.version}"` } },
                }),
              );
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
          <Text size="sm" c="var(--tg-strong)">
            {notice.text}
          </Text>
        </Alert>
      )}
      <Card withBorder p={0}>
        <DataTable
          data-testid="upstreams-table"
          verticalSpacing="sm"
          minWidth={1000}
          label="Upstreams"
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
                    <Text size="xs" c="dimmed">
                      {u.displayName}
                    </Text>
                  )}
                  {u.url && (
                    <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }} data-testid="upstream-row-url">
                      {u.url}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{transportLabel(u.transport)}</Text>
                  <Text size="xs" c="dimmed">
                    auth: {authModeLabel(u.authMode)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <Badge variant="outline" color={u.enabled ? 'green.9' : 'red.9'} c="var(--tg-strong)">
                      {u.enabled ? 'Enabled' : 'Disabled'}
                    </Badge>
                    {u.syncPaused && (
                      <Badge variant="outline" color="orange.9" c="var(--tg-strong)" data-testid="sync-paused">
                        Sync paused
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{u.lastSyncAt ? formatTimestamp(u.lastSyncAt, org.timeZone) : 'Never synced'}</Text>
                  {watch?.id === u.id && (
                    <Text size="xs" c="dimmed" role="status">
                      Sync queued…
                    </Text>
                  )}
                  {u.lastSyncError && (
                    <Text size="sm" c="var(--tg-danger)" data-testid="sync-error">
                      <Text span fw={600} data-testid="sync-error-kind">
                        {syncErrorKind(u.lastSyncError)}:
                      </Text>{' '}
                      {u.lastSyncError}
                    </Text>
                  )}
                  {u.lastSyncWarnings.length > 0 && (
                    <List size="xs" c="var(--tg-warn)" data-testid="sync-warnings">
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
