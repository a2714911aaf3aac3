import {
  Alert,
  Badge,
  Button,
  Card,
  CloseButton,
  Code,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { FormEvent, useState } from 'react';
import { ApiError, adminApi, answer, toApiError } from '../api/admin-client';
import { POLICY_LISTS, POLICY_LIST_LABELS } from '../api/oversight-types';
import type { Policy, PolicyDryRun, PolicyList, PolicyPatch, PolicyScope } from '../api/oversight-types';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { DataTable } from '../components/data-table';
import { type Directory, SCOPE_LABELS } from './policy-labels';

/** One level's policy: its lists, pending additions and removals, the dry run, then the PATCH. */
export function PolicyEditor({ dir, names }: { dir: Directory; names: Map<string, string> }) {
  const { me, org } = useSession();
  const mayEdit = canManageOrg(me.role);
  const [scope, setScope] = useState<PolicyScope>('ORG');
  const [scopeId, setScopeId] = useState<string | null>(org.id);
  const targets =
    scope === 'ORG' ? [{ id: org.id }] : scope === 'TEAM' ? dir.teams : scope === 'USER' ? dir.users : dir.keys;
  const policy = useLoad<Policy | null>(async () => {
    if (!scopeId) return null;
    try {
      return await answer(
        adminApi.GET('/v1/orgs/{orgId}/policies/{scope}/{scopeId}', {
          params: { path: { orgId: org.id, scope, scopeId } },
        }),
      );
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null; // the level has no policy of its own
      throw err;
    }
  }, [org.id, scope, scopeId]);
  const [patch, setPatch] = useState<PolicyPatch>({});
  const [dryRun, setDryRun] = useState<PolicyDryRun | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState<'dry-run' | 'apply' | null>(null);
  const [applied, setApplied] = useState<number | null>(null);

  const pendingCount = Object.values(patch).reduce((n, p) => n + (p?.add?.length ?? 0) + (p?.remove?.length ?? 0), 0);
  const reset = () => {
    setPatch({});
    setDryRun(null);
    setError(null);
  };
  const change = (list: PolicyList, kind: 'add' | 'remove', pattern: string) => {
    setPatch((p) => {
      const cur = p[list] ?? {};
      const other = kind === 'add' ? 'remove' : 'add';
      // Undoing a pending change of the other kind cancels it instead.
      if (cur[other]?.includes(pattern))
        return { ...p, [list]: { ...cur, [other]: cur[other]!.filter((x) => x !== pattern) } };
      if (cur[kind]?.includes(pattern)) return p;
      return { ...p, [list]: { ...cur, [kind]: [...(cur[kind] ?? []), pattern] } };
    });
    setDryRun(null);
    setApplied(null);
  };

  async function runDryRun() {
    setBusy('dry-run');
    setError(null);
    try {
      if (!scopeId) return;
      setDryRun(
        await answer(
          adminApi.POST('/v1/orgs/{orgId}/policies/{scope}/{scopeId}/dry-run', {
            params: { path: { orgId: org.id, scope, scopeId } },
            body: patch,
          }),
        ),
      );
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(null);
    }
  }

  async function apply() {
    setBusy('apply');
    setError(null);
    try {
      const current = policy.state === 'ready' ? policy.data : null;
      // If-Match: a change made by someone else since this page read the policy is refused (412), not overwritten.
      if (!scopeId) return;
      const written = await answer(
        adminApi.PATCH('/v1/orgs/{orgId}/policies/{scope}/{scopeId}', {
          params: {
            path: { orgId: org.id, scope, scopeId },
            header: current ? { 'If-Match': `"${current.version}"` } : {},
          },
          body: patch,
        }),
      );
      setApplied(written.version);
      reset();
      policy.reload();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(null);
    }
  }

  return (
    <Card withBorder component="section" aria-labelledby="policy-editor-title">
      <Stack gap="md">
        <Title order={2} size="h4" id="policy-editor-title">
          Allow and deny, level by level
        </Title>
        <Text size="sm" c="dimmed">
          Deny wins at every level; each level with an allow list must allow a tool; with no allow list anywhere nothing
          is allowed. Patterns are
          <Code>namespace:tool</Code> globs.
        </Text>
        <Group align="flex-end">
          <Select
            label="Level"
            data={(['ORG', 'TEAM', 'USER', 'KEY'] as const).map((s) => ({ value: s, label: SCOPE_LABELS[s] }))}
            value={scope}
            allowDeselect={false}
            onChange={(v) => {
              const s = (v ?? 'ORG') as PolicyScope;
              setScope(s);
              setScopeId(s === 'ORG' ? org.id : null);
              reset();
            }}
            data-testid="policy-scope"
            w={180}
          />
          {scope !== 'ORG' && (
            <Select
              label={SCOPE_LABELS[scope]}
              placeholder={`Choose a ${SCOPE_LABELS[scope].toLowerCase()}`}
              searchable
              data={targets.map((t) => ({ value: t.id, label: names.get(t.id) ?? t.id }))}
              value={scopeId}
              onChange={(v) => {
                setScopeId(v);
                reset();
              }}
              nothingFoundMessage="Nothing matches"
              data-testid="policy-target"
              w={320}
            />
          )}
        </Group>
        {!scopeId ? (
          <EmptyState title={`Choose a ${SCOPE_LABELS[scope].toLowerCase()}`}>
            Its own policy shows here, with what it allows and denies.
          </EmptyState>
        ) : policy.state === 'loading' ? (
          <LoadingState label="Loading the policy…" />
        ) : policy.state === 'error' ? (
          <ErrorState error={policy.error} what="the policy" onRetry={policy.reload} />
        ) : (
          <>
            <Text size="sm" data-testid="policy-version">
              {policy.data
                ? `Version ${policy.data.version}, last changed ${formatTimestamp(policy.data.updatedAt, org.timeZone)}`
                : 'This level has no policy of its own yet: it does not narrow what the levels above allow.'}
            </Text>
            {applied !== null && (
              <Alert color="green" role="status" title="Policy changed" data-testid="policy-applied">
                Saved as version {applied}. Edges apply it within a second.
              </Alert>
            )}
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              {POLICY_LISTS.map((list) => (
                <PatternList
                  key={list}
                  list={list}
                  patterns={policy.data?.[list] ?? []}
                  pending={patch[list]}
                  mayEdit={mayEdit}
                  onChange={change}
                />
              ))}
            </SimpleGrid>
            {mayEdit && pendingCount > 0 && (
              <Group>
                <Button onClick={runDryRun} loading={busy === 'dry-run'} data-testid="policy-dry-run">
                  Preview the change ({pendingCount})
                </Button>
                <Button variant="default" onClick={reset}>
                  Discard
                </Button>
              </Group>
            )}
            {error && (
              <Alert
                color="red"
                role="alert"
                title={error.status === 412 ? 'Someone changed this policy meanwhile' : 'The change was refused'}
                data-testid="policy-error"
              >
                <Stack gap="xs">
                  <Text size="sm">
                    {error.status === 412
                      ? 'Nothing was written. Reload it, check what changed, and apply your change again.'
                      : error.message}
                  </Text>
                  {error.status === 412 && (
                    <Group>
                      <Button size="xs" variant="white" color="red" onClick={policy.reload}>
                        Reload the policy
                      </Button>
                    </Group>
                  )}
                </Stack>
              </Alert>
            )}
            {dryRun && <DryRunResult result={dryRun} names={names} onApply={apply} applying={busy === 'apply'} />}
          </>
        )}
      </Stack>
    </Card>
  );
}

function PatternList({
  list,
  patterns,
  pending,
  mayEdit,
  onChange,
}: {
  list: PolicyList;
  patterns: string[];
  pending?: { add?: string[]; remove?: string[] };
  mayEdit: boolean;
  onChange: (list: PolicyList, kind: 'add' | 'remove', pattern: string) => void;
}) {
  const [draft, setDraft] = useState('');
  const label = POLICY_LIST_LABELS[list];
  const removed = new Set(pending?.remove ?? []);
  const added = (pending?.add ?? []).filter((p) => !patterns.includes(p));
  function add(e: FormEvent) {
    e.preventDefault();
    const p = draft.trim();
    if (!p) return;
    onChange(list, 'add', p);
    setDraft('');
  }
  return (
    <Stack gap={6} data-testid={`policy-list-${list}`}>
      <Text fw={600} size="sm">
        {label}
      </Text>
      <Group gap={6} mih={28}>
        {patterns.length === 0 && added.length === 0 && (
          <Text size="sm" c="dimmed">
            None
          </Text>
        )}
        {patterns.map((p) => (
          <Badge
            key={p}
            variant="outline"
            color={removed.has(p) ? 'red.9' : 'gray.8'}
            c="var(--tg-strong)"
            tt="none"
            td={removed.has(p) ? 'line-through' : undefined}
            rightSection={
              mayEdit ? (
                <CloseButton
                  size="xs"
                  aria-label={removed.has(p) ? `Keep ${p} in ${label}` : `Remove ${p} from ${label}`}
                  onClick={() => onChange(list, removed.has(p) ? 'add' : 'remove', p)}
                />
              ) : undefined
            }
          >
            {p}
          </Badge>
        ))}
        {added.map((p) => (
          <Badge
            key={`+${p}`}
            variant="outline"
            color="green.9"
            c="var(--tg-strong)"
            tt="none"
            data-testid="pending-add"
            rightSection={
              <CloseButton size="xs" aria-label={`Do not add ${p}`} onClick={() => onChange(list, 'remove', p)} />
            }
          >
            + {p}
          </Badge>
        ))}
      </Group>
      {mayEdit && (
        <form onSubmit={add}>
          <Group gap="xs" wrap="nowrap">
            <TextInput
              size="xs"
              aria-label={`Pattern to add to ${label}`}
              placeholder={
                list.startsWith('resource')
                  ? 'docs:file:///reports/*'
                  : list.startsWith('prompt')
                    ? 'namespace:prompt_*'
                    : 'namespace:tool_*'
              }
              value={draft}
              onChange={(e) => setDraft(e.currentTarget.value)}
            />
            <Button size="xs" variant="default" type="submit" disabled={!draft.trim()}>
              Add
            </Button>
          </Group>
        </form>
      )}
    </Stack>
  );
}

function DryRunResult({
  result,
  names,
  onApply,
  applying,
}: {
  result: PolicyDryRun;
  names: Map<string, string>;
  onApply: () => void;
  applying: boolean;
}) {
  return (
    <Card withBorder bg="gray.0" data-testid="dry-run-result" aria-label="Dry run">
      <Stack gap="sm">
        <Text fw={600}>
          Dry run: {result.keysEvaluated} active key{result.keysEvaluated === 1 ? '' : 's'} compared,{' '}
          {result.changes.length} would change. Nothing is written yet.
        </Text>
        {result.changes.length === 0 ? (
          <Text size="sm">No key gains or loses a tool with this change.</Text>
        ) : (
          <DataTable
            data-testid="dry-run-table"
            head={
              <>
                <Table.Th>Key</Table.Th>
                <Table.Th>Owner</Table.Th>
                <Table.Th>Gains</Table.Th>
                <Table.Th>Loses</Table.Th>
              </>
            }
          >
            {result.changes.map((c) => (
              <Table.Tr key={c.keyId} data-testid="dry-run-row">
                <Table.Td>{c.keyName}</Table.Td>
                <Table.Td>{names.get(c.userId) ?? c.userId}</Table.Td>
                <Table.Td>{c.gained.length ? c.gained.join(', ') : '—'}</Table.Td>
                <Table.Td data-testid="dry-run-lost">{c.lost.length ? c.lost.join(', ') : '—'}</Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
        <Group>
          <Button onClick={onApply} loading={applying} data-testid="policy-apply">
            Apply the change
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
