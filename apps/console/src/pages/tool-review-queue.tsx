import { Alert, Badge, Button, Card, Checkbox, Code, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { ApiError, adminApi, answer, toApiError } from '../api/admin-client';
import type { BulkReviewResult, CatalogTool, ToolDiff } from '../api/governance-types';
import { DefinitionDiff } from '../components/definition-diff';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { RowAction } from '../components/row-action';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';
import { ConsoleModal } from '../components/console-modal';
import { reviewLabel } from '../lib/labels';

import type { CatalogData } from './upstreams-page';

/** The review queue: tools new or changed at their upstream, approved or rejected one by one or in bulk, with a side-by-side diff. */
export function ReviewBadge({ status }: { status: CatalogTool['reviewStatus'] }) {
  const color = status === 'APPROVED' ? 'green.9' : status === 'PENDING' ? 'orange.9' : 'red.9';
  return (
    <Badge variant="outline" color={color} c="var(--tg-strong)">
      {reviewLabel(status)}
    </Badge>
  );
}

export function ReviewQueue({ data, reload }: { data: CatalogData; reload: () => void }) {
  const { me, org } = useSession();
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
      const result = await answer(
        adminApi.POST('/v1/orgs/{orgId}/tools/review', {
          params: { path: { orgId: org.id } },
          body: { decisions: tools.map((t) => ({ toolId: t.id, decision, definitionHash: t.definitionHash })) },
        }),
      );
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
      styles={{ title: { color: 'var(--tg-strong)' } }}
    >
      {stale.length > 0 && (
        <Stack gap={4}>
          <Text size="sm" c="var(--tg-strong)">
            These were left as they are: the upstream changed them after you looked. Open their diff again.
          </Text>
          {stale.map((r) => (
            <Group key={r.toolId} gap="xs">
              <Badge variant="outline" color="orange.9" c="var(--tg-strong)">
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
  const { org } = useSession();
  const diff = useLoad<ToolDiff>(
    () =>
      answer(
        adminApi.GET('/v1/orgs/{orgId}/tools/{toolId}/diff', { params: { path: { orgId: org.id, toolId: tool.id } } }),
      ),
    [org.id, tool.id],
  );
  return (
    <ConsoleModal
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
    </ConsoleModal>
  );
}
