import { Badge, Button, Card, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Budget as AlertedBudget } from '../api/governance-types';
import type { AlertWebhook, BudgetAlert } from '../api/oversight-types';
import { ConfirmModal } from '../components/confirm-modal';
import { FormActions, FormError } from '../components/form-actions';
import { FormModal } from '../components/form-modal';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { formatTimestamp } from '../lib/dates';
import { useFormSubmit } from '../lib/form-submit';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { scopeNames } from '../lib/scope-names';
import { SCOPE_LABELS, periodLabel } from '../lib/labels';
import { DataTable } from '../components/data-table';
import { SecretShownOnce } from '../components/secret-shown-once';

/** The worker's delivery attempts before an alert stays undelivered (docs/admin-api.md). */
const MAX_ATTEMPTS = 8;

interface AlertsData {
  webhooks: AlertWebhook[];
  alerts: BudgetAlert[];
  budgets: AlertedBudget[];
  names: Map<string, string>;
}

function delivery(a: BudgetAlert, webhooks: number): { label: string; color: string } {
  if (a.deliveredAt) return { label: 'Delivered', color: 'green.9' };
  if (a.attempts === 0)
    return webhooks === 0 ? { label: 'No webhook', color: 'gray.8' } : { label: 'Queued', color: 'indigo.8' };
  if (a.attempts >= MAX_ATTEMPTS) return { label: 'Failed', color: 'red.9' };
  return { label: 'Retrying', color: 'orange.9' };
}

export function AlertsPage() {
  const { me, org } = useSession();
  const mayManage = canManageOrg(me.role);
  const data = useLoad<AlertsData>(async () => {
    const [webhooks, alerts, budgets, teams, users, keys] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/alert-webhooks', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/alerts', { params: { path: { orgId: org.id }, query: { limit: 200 } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/budgets', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/keys', { params: { path: { orgId: org.id } } })),
    ]);
    const names = scopeNames({ org, teams, users, keys });
    return { webhooks, alerts, budgets, names };
  }, [org.id]);
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<AlertWebhook | null>(null);

  if (data.state === 'loading') return <LoadingState label="Loading alerts…" />;
  if (data.state === 'error') return <ErrorState error={data.error} what="alerts" onRetry={data.reload} />;
  const { webhooks, alerts, budgets, names } = data.data;
  const budgetLabel = (id: string) => {
    const b = budgets.find((x) => x.id === id);
    if (!b) return 'A deleted budget';
    const who = names.get(b.scopeId) ?? (b.scope === 'KEY' ? 'a deleted key' : b.scopeId);
    return `${SCOPE_LABELS[b.scope]} ${who} · ${periodLabel(b.period)} · ${b.mode === 'HARD' ? 'hard' : 'soft'}`;
  };

  return (
    <Stack gap="xl">
      <Card withBorder component="section" aria-labelledby="alerts-history-title" p={0}>
        <Group justify="space-between" p="md">
          <Title order={2} size="h4" id="alerts-history-title">
            Alerts fired
          </Title>
          <Button size="xs" variant="default" onClick={data.reload}>
            Refresh
          </Button>
        </Group>
        {alerts.length === 0 ? (
          <EmptyState title="No alert has fired">
            A budget alerts when its spend crosses one of its thresholds (e.g. 50, 80, 100 %); each threshold once per
            period.
          </EmptyState>
        ) : (
          <DataTable
            striped
            data-testid="alerts-table"
            minWidth={900}
            label="Alerts"
            head={
              <>
                <Table.Th>Fired</Table.Th>
                <Table.Th>Budget</Table.Th>
                <Table.Th>Threshold</Table.Th>
                <Table.Th>Spent then</Table.Th>
                <Table.Th>Webhook delivery</Table.Th>
              </>
            }
          >
            {alerts.map((a) => {
              const d = delivery(a, webhooks.length);
              return (
                <Table.Tr key={a.id} data-testid="alert-row">
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatTimestamp(a.createdAt, org.timeZone)}</Table.Td>
                  <Table.Td>{budgetLabel(a.budgetId)}</Table.Td>
                  <Table.Td data-testid="alert-threshold">{a.threshold} %</Table.Td>
                  <Table.Td>
                    <Money micros={a.spentMicros} />
                  </Table.Td>
                  <Table.Td data-testid="alert-delivery">
                    <Group gap={6}>
                      <Badge variant="outline" color={d.color} c="var(--tg-strong)">
                        {d.label}
                      </Badge>
                      <Text size="xs" c="dimmed">
                        {a.deliveredAt
                          ? formatTimestamp(a.deliveredAt, org.timeZone)
                          : `${a.attempts} attempt${a.attempts === 1 ? '' : 's'}`}
                      </Text>
                    </Group>
                    {a.lastError && !a.deliveredAt && (
                      <Text size="xs" c="var(--tg-danger)">
                        {a.lastError}
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </DataTable>
        )}
      </Card>

      <Card withBorder component="section" aria-labelledby="webhooks-title" p={0}>
        <Group justify="space-between" p="md">
          <Title order={2} size="h4" id="webhooks-title">
            Alert webhooks
          </Title>
          {mayManage && (
            <Button
              size="xs"
              onClick={() => setAdding(true)}
              disabled={webhooks.length >= 10}
              data-testid="add-webhook"
            >
              Add a webhook
            </Button>
          )}
        </Group>
        {webhooks.length === 0 ? (
          <EmptyState title="No webhook yet">
            Alerts are recorded here either way; a webhook also receives each one as a signed POST (HMAC-SHA-256).
          </EmptyState>
        ) : (
          <DataTable
            data-testid="webhooks-table"
            head={
              <>
                <Table.Th>URL</Table.Th>
                <Table.Th>Description</Table.Th>
                <Table.Th>Added</Table.Th>
                {mayManage && <Table.Th>Actions</Table.Th>}
              </>
            }
          >
            {webhooks.map((w) => (
              <Table.Tr key={w.id} data-testid="webhook-row">
                <Table.Td>
                  <Code>{w.url}</Code>
                </Table.Td>
                <Table.Td>{w.description ?? '—'}</Table.Td>
                <Table.Td>{formatTimestamp(w.createdAt, org.timeZone)}</Table.Td>
                {mayManage && (
                  <Table.Td>
                    <RowAction danger onClick={() => setDeleting(w)} aria-label={`Delete webhook ${w.url}`}>
                      Delete
                    </RowAction>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </Card>
      {adding && <AddWebhookModal onClose={() => setAdding(false)} onAdded={data.reload} />}
      {deleting && (
        <DeleteWebhookModal
          hook={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null);
            data.reload();
          }}
        />
      )}
    </Stack>
  );
}

function AddWebhookModal({ onClose, onAdded }: { onClose: () => void; onAdded: () => void }) {
  const { org } = useSession();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const form = useFormSubmit(['url', 'description']);
  const [secret, setSecret] = useState<string | null>(null);
  const submit = form.onSubmit(async () => {
    const res = await answer(
      adminApi.POST('/v1/orgs/{orgId}/alert-webhooks', {
        params: { path: { orgId: org.id } },
        body: { url: url.trim(), description: description.trim() || undefined },
      }),
    );
    setSecret(res.secret);
    onAdded();
  });
  if (secret) {
    return (
      <SecretShownOnce
        title="Webhook added"
        warning="Copy the signing secret now"
        secret={secret}
        onClose={onClose}
        testId="webhook-secret"
      >
        The receiver checks each alert's X-Tollgate-Signature with it. It is not shown again.
      </SecretShownOnce>
    );
  }
  return (
    <FormModal title="Add an alert webhook" onClose={onClose} onSubmit={submit}>
      <TextInput
        label="URL"
        required
        placeholder="https://finance.example.com/hooks/tollgate"
        value={url}
        onChange={(e) => setUrl(e.currentTarget.value)}
        error={form.at('url')}
        data-testid="webhook-url"
      />
      <TextInput
        label="Description"
        value={description}
        onChange={(e) => setDescription(e.currentTarget.value)}
        error={form.at('description')}
      />
      <FormError error={form.elsewhere} />
      <FormActions
        submitLabel="Add webhook"
        submitTestId="webhook-submit"
        busy={form.busy}
        disabled={!url.trim()}
        onCancel={onClose}
      />
    </FormModal>
  );
}

function DeleteWebhookModal({
  hook,
  onClose,
  onDeleted,
}: {
  hook: AlertWebhook;
  onClose: () => void;
  onDeleted: () => void;
}) {
  return (
    <ConfirmModal
      title="Delete this alert webhook?"
      confirmLabel="Delete webhook"
      testId="confirm-delete-webhook"
      onClose={onClose}
      onConfirm={async () => {
        await answer(
          adminApi.DELETE('/v1/orgs/{orgId}/alert-webhooks/{webhookId}', {
            params: { path: { orgId: hook.orgId, webhookId: hook.id } },
          }),
        );
        onDeleted();
      }}
    >
      <Text size="sm">
        <Code>{hook.url}</Code> stops receiving alerts. Alerts stay in the history.
      </Text>
    </ConfirmModal>
  );
}
