import { Alert, Badge, Button, Card, Code, Group, Stack, Table, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { ApiError, adminApi, answer, toApiError } from '../api/admin-client';
import type { Upstream as OAuthUpstream } from '../api/governance-types';
import type { Connection } from '../api/oversight-types';
import { ConfirmModal } from '../components/confirm-modal';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';

const HEALTH: Record<Connection['health'], { label: string; color: string; hint?: string }> = {
  valid: { label: 'Connected', color: 'green.9' },
  expiring: { label: 'Expiring', color: 'orange.9', hint: 'Tollgate refreshes it on the next call.' },
  expired: { label: 'Expired', color: 'red.9', hint: 'Connect again to keep using it.' },
  refresh_failed: {
    label: 'Refresh failed',
    color: 'red.9',
    hint: 'Connect again: the upstream refused to renew access.',
  },
};

interface ConnectionsData {
  upstreams: OAuthUpstream[];
  connections: Connection[];
}

/** The signed-in person's own accounts at per-user OAuth upstreams: connect or disconnect. */
export function ConnectionsPage() {
  const { me, org } = useSession();
  const userId = me.user?.id ?? null;
  const data = useLoad<ConnectionsData | null>(async () => {
    if (!userId) return null;
    const [upstreams, connections] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/upstreams', { params: { path: { orgId: org.id } } })),
      answer(
        adminApi.GET('/v1/orgs/{orgId}/users/{userId}/connections', { params: { path: { orgId: org.id, userId } } }),
      ),
    ]);
    return { upstreams: upstreams.filter((u) => u.authMode === 'PER_USER_OAUTH'), connections };
  }, [org.id, userId]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  // The upstream being connected in the other tab, and its connection as it was then (a reconnect changes it).
  const [opened, setOpened] = useState<{ upstream: OAuthUpstream; before: string } | null>(null);
  const [connected, setConnected] = useState<string | null>(null);
  const [disconnecting, setDisconnecting] = useState<OAuthUpstream | null>(null);
  const snapshot = (upstreamId: string) =>
    JSON.stringify(
      data.state === 'ready' ? (data.data?.connections.find((c) => c.upstreamId === upstreamId) ?? null) : null,
    );

  // While a connection is being made in the other tab, look again every 2 s and when this tab is back in focus:
  // the page notices the new connection by itself.
  useEffect(() => {
    if (!opened) return;
    const again = () => data.reload();
    const timer = setInterval(again, 2000);
    window.addEventListener('focus', again);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', again);
    };
  }, [opened, data.reload]);
  useEffect(() => {
    if (opened && data.state === 'ready' && snapshot(opened.upstream.id) !== opened.before) {
      setConnected(opened.upstream.namespace);
      setOpened(null);
    }
  });

  if (!userId) {
    return (
      <EmptyState title="This sign-in names no person">
        Connections belong to a person. Sign in with single sign-on, or with a token issued for your user, to connect
        your accounts.
      </EmptyState>
    );
  }
  if (data.state === 'loading') return <LoadingState label="Loading your connections…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="your connections" onRetry={data.reload} />;
  const { upstreams, connections } = data.data!;

  async function connect(u: OAuthUpstream) {
    setBusy(u.id);
    setError(null);
    setConnected(null);
    const before = snapshot(u.id);
    // Opened before the answer so browsers do not block it as a pop-up; pointed at the URL once known.
    const tab = window.open('', '_blank');
    if (tab) tab.opener = null; // the upstream's page gets no handle on the console
    try {
      if (!userId) return;
      const started = await answer(
        adminApi.POST('/v1/orgs/{orgId}/users/{userId}/connections/{upstreamId}', {
          params: { path: { orgId: org.id, userId, upstreamId: u.id } },
        }),
      );
      if (tab) tab.location.href = started.authorizationUrl;
      else window.location.assign(started.authorizationUrl);
      setOpened({ upstream: u, before });
    } catch (err) {
      tab?.close();
      setError(toApiError(err));
    } finally {
      setBusy(null);
    }
  }

  async function disconnect(u: OAuthUpstream) {
    if (!userId) return;
    await answer(
      adminApi.DELETE('/v1/orgs/{orgId}/users/{userId}/connections/{upstreamId}', {
        params: { path: { orgId: org.id, userId, upstreamId: u.id } },
      }),
    );
    setDisconnecting(null);
    data.reload();
  }

  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        Some upstreams act as you, with your own account there. Connect once; Tollgate keeps the tokens encrypted and
        refreshes them. Disconnecting forgets them: the next call asks you to connect again.
      </Text>
      {opened && (
        <Alert
          color="indigo"
          role="status"
          title={`Finish connecting ${opened.upstream.namespace} in the new tab`}
          styles={{ title: { color: 'var(--tg-strong)' } }}
          data-testid="connect-waiting"
        >
          <Group gap="sm">
            <Text size="sm">Sign in there and allow access; this page notices the connection by itself.</Text>
            <Button size="xs" variant="white" onClick={() => data.reload()}>
              Look again now
            </Button>
          </Group>
        </Alert>
      )}
      {connected && (
        <Alert
          color="green"
          role="status"
          title={`Connected to ${connected}`}
          styles={{ title: { color: 'var(--tg-strong)' } }}
          data-testid="connect-done"
        >
          <Text size="sm">Agents can now call its tools as you. You can close the other tab.</Text>
        </Alert>
      )}
      {error && (
        <Alert color="red" role="alert" title="That did not work">
          {error.message}
        </Alert>
      )}
      <Card withBorder p={0}>
        {upstreams.length === 0 ? (
          <EmptyState title="Nothing to connect">
            No upstream of this organisation asks for your own account. Upstreams shared by everyone need no connection.
          </EmptyState>
        ) : (
          <DataTable
            data-testid="connections-table"
            head={
              <>
                <Table.Th>Upstream</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Access token expires</Table.Th>
                <Table.Th>Connected since</Table.Th>
                <Table.Th>Actions</Table.Th>
              </>
            }
          >
            {upstreams.map((u) => {
              const c = connections.find((x) => x.upstreamId === u.id);
              const h = c ? HEALTH[c.health] : null;
              return (
                <Table.Tr key={u.id} data-testid="connection-row" data-upstream={u.namespace}>
                  <Table.Td>
                    <Code>{u.namespace}</Code>
                    {!u.enabled && (
                      <Text size="xs" c="dimmed">
                        disabled by an admin
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td data-testid="connection-status">
                    <Badge variant="outline" color={h?.color ?? 'gray.8'} c="var(--tg-strong)">
                      {h?.label ?? 'Not connected'}
                    </Badge>
                    {(h?.hint || c?.lastRefreshError) && (
                      <Text size="xs" c="dimmed">
                        {c?.lastRefreshError ?? h?.hint}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{c?.expiresAt ? formatTimestamp(c.expiresAt, org.timeZone) : '—'}</Table.Td>
                  <Table.Td>{c ? formatTimestamp(c.createdAt, org.timeZone) : '—'}</Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <Button
                        size="xs"
                        onClick={() => void connect(u)}
                        loading={busy === u.id}
                        aria-label={`${c ? 'Reconnect' : 'Connect'} ${u.namespace}`}
                      >
                        {c ? 'Reconnect' : 'Connect'}
                      </Button>
                      {c && (
                        <RowAction
                          danger
                          onClick={() => setDisconnecting(u)}
                          disabled={busy === u.id}
                          aria-label={`Disconnect ${u.namespace}`}
                        >
                          Disconnect
                        </RowAction>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </DataTable>
        )}
      </Card>
      {disconnecting && (
        <ConfirmModal
          title={`Disconnect your ${disconnecting.namespace} account?`}
          confirmLabel="Disconnect"
          testId="confirm-disconnect"
          onClose={() => setDisconnecting(null)}
          onConfirm={() => disconnect(disconnecting)}
        >
          <Text size="sm">
            Tollgate forgets your tokens for <Code>{disconnecting.namespace}</Code>: calls to its tools ask you to
            connect again. Your account at the upstream is not changed.
          </Text>
        </ConfirmModal>
      )}
    </Stack>
  );
}
