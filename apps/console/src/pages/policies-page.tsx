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
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { FormEvent, useMemo, useState } from 'react';
import { ApiError, get, post, send, toApiError } from '../api/admin-client';
import type { Key, Team, User } from '../api/admin-types';
import { POLICY_LISTS, POLICY_LIST_LABELS } from '../api/oversight-types';
import type {
  EffectivePolicy,
  Policy,
  PolicyDryRun,
  PolicyList,
  PolicyPatch,
  PolicyScope,
} from '../api/oversight-types';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { canManageOrg } from '../lib/roles';
import { useLoad } from '../lib/use-load';
import { useOrgPath, useSession } from '../session';
import { DataTable } from '../components/data-table';

interface Directory {
  teams: Team[];
  users: User[];
  keys: Key[];
}

const SCOPE_LABELS: Record<PolicyScope, string> = { ORG: 'Organisation', TEAM: 'Team', USER: 'User', KEY: 'Key' };

const REFUSAL_LABELS: Record<string, string> = {
  DENIED_BY_RULE: 'Denied by rule',
  NOT_IN_ALLOW_LIST: 'Not in allow list',
  NO_ALLOW_LIST: 'No allow list anywhere',
  KEY_REVOKED: 'Key revoked',
  KEY_EXPIRED: 'Key expired',
};

/** Names for scope ids: the org, teams, users ("Ada (ada@…)") and keys. */
function useNames(dir: Directory | null, orgId: string, orgName: string) {
  return useMemo(() => {
    const m = new Map<string, string>([[orgId, orgName]]);
    for (const t of dir?.teams ?? []) m.set(t.id, t.name);
    for (const u of dir?.users ?? []) m.set(u.id, u.name ? `${u.name} (${u.email})` : u.email);
    for (const k of dir?.keys ?? []) m.set(k.id, `${k.name} (${k.prefix}…)`);
    return m;
  }, [dir, orgId, orgName]);
}

export function PoliciesPage() {
  const { org } = useSession();
  const orgPath = useOrgPath();
  const dir = useLoad<Directory>(async () => {
    const [teams, users, keys] = await Promise.all([
      get<Team[]>(`${orgPath}/teams`),
      get<User[]>(`${orgPath}/users`),
      get<Key[]>(`${orgPath}/keys`),
    ]);
    return { teams, users, keys: keys.filter((k) => !k.revokedAt) };
  }, [orgPath]);
  const names = useNames(dir.state === 'ready' ? dir.data : null, org.id, org.name);

  if (dir.state === 'loading') return <LoadingState label="Loading policies…" />;
  if (dir.state === 'error') return <ErrorState error={dir.error} what="policies" onRetry={dir.reload} />;
  return (
    <Stack gap="xl">
      <PolicyEditor dir={dir.data} names={names} />
      <Simulator keys={dir.data.keys} names={names} />
    </Stack>
  );
}

/** One level's policy: its lists, pending additions and removals, the dry run, then the PATCH. */
function PolicyEditor({ dir, names }: { dir: Directory; names: Map<string, string> }) {
  const { me, org } = useSession();
  const orgPath = useOrgPath();
  const mayEdit = canManageOrg(me.role);
  const [scope, setScope] = useState<PolicyScope>('ORG');
  const [scopeId, setScopeId] = useState<string | null>(org.id);
  const targets =
    scope === 'ORG' ? [{ id: org.id }] : scope === 'TEAM' ? dir.teams : scope === 'USER' ? dir.users : dir.keys;
  const policy = useLoad<Policy | null>(async () => {
    if (!scopeId) return null;
    try {
      return await get<Policy>(`${orgPath}/policies/${scope}/${scopeId}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null; // the level has no policy of its own
      throw err;
    }
  }, [orgPath, scope, scopeId]);
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
      setDryRun(await post<PolicyDryRun>(`${orgPath}/policies/${scope}/${scopeId}/dry-run`, patch));
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
      const written = await send<Policy>(
        'PATCH',
        `${orgPath}/policies/${scope}/${scopeId}`,
        patch,
        current ? { 'If-Match': `"${current.version}"` } : {},
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
        <Text size="sm" c="gray.8">
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
          <Text size="sm" c="gray.8">
            None
          </Text>
        )}
        {patterns.map((p) => (
          <Badge
            key={p}
            variant="outline"
            color={removed.has(p) ? 'red.9' : 'gray.8'}
            c="dark.9"
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
            c="dark.9"
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

/** The effective policy of one key: every tool of the catalog, its price, or the rule that refused it. */
function Simulator({ keys, names }: { keys: Key[]; names: Map<string, string> }) {
  const orgPath = useOrgPath();
  const [keyId, setKeyId] = useState<string | null>(null);
  const [refusedOnly, setRefusedOnly] = useState(false);
  const result = useLoad<EffectivePolicy | null>(
    async () => (keyId ? get<EffectivePolicy>(`${orgPath}/keys/${keyId}/effective-policy`) : null),
    [orgPath, keyId],
  );
  const tools =
    result.state === 'ready' && result.data ? result.data.tools.filter((t) => !refusedOnly || !t.callable) : [];
  return (
    <Card withBorder component="section" aria-labelledby="simulator-title">
      <Stack gap="md">
        <Title order={2} size="h4" id="simulator-title">
          Effective-policy simulator
        </Title>
        <Text size="sm" c="gray.8">
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
              <Text size="sm">Key: {result.data.keyStatus.toLowerCase()}</Text>
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
                      <Badge variant="outline" color={t.callable ? 'green.9' : 'red.9'} c="dark.9">
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
