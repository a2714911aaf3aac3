import { Badge, Button, Card, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { KeyPicker } from '../components/key-picker';
import { keysByIds } from '../lib/keys-by-ids';
import type { Key } from '../api/admin-types';
import type { TrailKind, TrailStep } from '../api/calls-types';
import { CursorPager } from '../components/cursor-pager';
import { DataTable } from '../components/data-table';
import { Money } from '../components/money-text';
import { EmptyState, ErrorState, LoadingState, ScopeNote } from '../components/page-states';
import { formatTimestamp } from '../lib/dates';
import { downloadText } from '../lib/download';
import { replaceSearch, useSearch } from '../lib/router';
import { spendScopeOf } from '../lib/roles';
import { useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';

const PAGE_SIZE = 100;

/** What each kind of step is, in an operator's words. */
const KIND_LABELS: Record<TrailKind, string> = {
  TOOLS_LIST: 'Tool list',
  CATEGORIES: 'Categories',
  SEARCH: 'Search',
  SCHEMAS: 'Schemas read',
  FILES_LIST: 'Files listed',
  FILES_READ: 'Stubs read',
  DOCS_READ: 'Docs read',
  RESOURCES_LIST: 'Resource list',
  PROMPTS_LIST: 'Prompt list',
  RESULT_PAGE: 'Result page',
  CALL: 'Call',
  SCRIPT: 'Script',
  RESOURCE_READ: 'Resource read',
  PROMPT_GET: 'Prompt get',
};

const ACTIONS: readonly TrailKind[] = ['CALL', 'SCRIPT', 'RESULT_PAGE', 'RESOURCE_READ', 'PROMPT_GET'];

interface Filters {
  sessionId: string;
  keyId: string | null;
  kind: string | null;
}

/**
 * An agent's trail (GET …/trail), beside the call log: what it was shown (lists, searches with
 * their ranked results, schema, stub and doc reads) and then did (calls, scripts with each inner
 * call's line), oldest first, with tokens, cost and the catalog version. A call names the step that
 * showed it its tool; a script the stubs it was written against. Export as JSON lines.
 */
export function TrailPage() {
  const { org, me } = useSession();
  const scope = spendScopeOf(me.role);
  const search = useSearch();
  const initial = useMemo((): Filters => {
    const p = new URLSearchParams(search);
    return { sessionId: p.get('sessionId') ?? '', keyId: p.get('keyId'), kind: p.get('kind') };
  }, []);
  const [filters, setFilters] = useState<Filters>(initial);
  const [sessionTyped, setSessionTyped] = useState(initial.sessionId);
  // Applied a moment after typing stops. An unchanged id keeps the filters as they are, so the
  // page opened from a link does not load its trail twice (and blank the table in between).
  useEffect(() => {
    const typed = sessionTyped.trim();
    const t = setTimeout(() => setFilters((f) => (f.sessionId === typed ? f : { ...f, sessionId: typed })), 400);
    return () => clearTimeout(t);
  }, [sessionTyped]);
  const params = useMemo(() => {
    const p: Record<string, string> = {};
    if (filters.sessionId) p.sessionId = filters.sessionId;
    if (filters.keyId) p.keyId = filters.keyId;
    if (filters.kind) p.kind = filters.kind;
    return p;
  }, [filters]);
  const query = useMemo(() => new URLSearchParams(params).toString(), [params]);
  // The URL holds what the page shows; a new query starts again at the first page.
  useEffect(() => replaceSearch(query), [query]);
  const pages = useCursorPages(
    query,
    (cursor) =>
      answer(
        adminApi.GET('/v1/orgs/{orgId}/trail', {
          params: { path: { orgId: org.id }, query: { ...params, limit: PAGE_SIZE, cursor } },
        }),
      ),
    [org.id],
  );
  const page = pages.page;
  // The names of the keys on this page of steps only, looked up by id (not every key of the org).
  const stepKeyIds = page.state === 'ready' ? [...new Set(page.data.steps.map((s) => s.keyId))].sort().join(',') : '';
  const keys = useLoad(
    () => (stepKeyIds ? keysByIds(org.id, stepKeyIds.split(',')).catch(() => [] as Key[]) : Promise.resolve([])),
    [org.id, stepKeyIds],
  );
  const keyName = (id: string) => (keys.state === 'ready' ? keys.data.find((k) => k.id === id)?.name : undefined) ?? id;
  const [exporting, setExporting] = useState(false);
  const exportLines = async () => {
    setExporting(true);
    try {
      const text = await answer(
        adminApi.GET('/v1/orgs/{orgId}/trail/export', {
          params: { path: { orgId: org.id }, query: params },
          parseAs: 'text',
        }),
      );
      downloadText(`trail-${filters.sessionId || org.slug}.jsonl`, text, 'application/x-ndjson');
    } finally {
      setExporting(false);
    }
  };
  const byId = useMemo(() => new Map((page.state === 'ready' ? page.data.steps : []).map((s) => [s.id, s])), [page]);

  return (
    <Stack gap="md">
      <ScopeNote scope={scope} />
      <Group align="flex-end" wrap="wrap" gap="sm">
        <TextInput
          label="Session"
          placeholder="Any session (Mcp-Session-Id)"
          value={sessionTyped}
          onChange={(e) => setSessionTyped(e.currentTarget.value)}
          data-testid="trail-session"
          w={300}
        />
        <KeyPicker
          value={filters.keyId}
          onChange={(v) => setFilters((f) => ({ ...f, keyId: v }))}
          testId="trail-key"
          w={240}
        />
        <Select
          label="Kind"
          placeholder="Every step"
          clearable
          data={Object.entries(KIND_LABELS).map(([value, label]) => ({ value, label }))}
          value={filters.kind}
          onChange={(v) => setFilters((f) => ({ ...f, kind: v }))}
          data-testid="trail-kind"
          w={180}
        />
        <Button variant="default" loading={exporting} onClick={() => void exportLines()} data-testid="trail-export">
          Export JSON lines
        </Button>
      </Group>
      {page.state === 'ready' && (
        <Text size="sm" data-testid="trail-totals">
          {page.data.summary.steps.toLocaleString()} steps: discovery{' '}
          {page.data.summary.discoveryTokens.toLocaleString()} tokens, calls{' '}
          {page.data.summary.callTokens.toLocaleString()} tokens, cost <Money micros={page.data.summary.costMicros} />
        </Text>
      )}
      <Card withBorder p={0}>
        {page.state === 'loading' && <LoadingState label="Loading the trail…" />}
        {page.state === 'error' && <ErrorState error={page.error} what="the trail" onRetry={page.reload} />}
        {page.state === 'ready' &&
          (page.data.steps.length === 0 ? (
            <EmptyState title="No step matches">
              What agents read and did through the edge appears here within seconds, unless the organisation keeps no
              trail (Organisation settings).
            </EmptyState>
          ) : (
            <div className="tg-table-scroll" role="region" aria-label="Agent trail, oldest first" tabIndex={0}>
              <DataTable data-testid="trail-table" miw={960} verticalSpacing="xs" striped head={<TrailHead />}>
                {page.data.steps.map((s) => (
                  <TrailRow
                    key={s.id}
                    step={s}
                    led={s.ledBy ? byId.get(s.ledBy) : undefined}
                    keyName={keyName(s.keyId)}
                    timeZone={org.timeZone}
                  />
                ))}
              </DataTable>
            </div>
          ))}
      </Card>
      <CursorPager
        pages={pages}
        summary={`Page ${pages.number}, oldest first. Times in ${org.timeZone}.`}
        previousLabel="Earlier"
        nextLabel="Later"
        testIdPrefix="trail"
      />
    </Stack>
  );
}

function TrailHead() {
  return (
    <>
      <Table.Th>When</Table.Th>
      <Table.Th w={150}>Step</Table.Th>
      <Table.Th>What</Table.Th>
      <Table.Th>Key</Table.Th>
      <Table.Th ta="right">Tokens</Table.Th>
      <Table.Th ta="right">Cost</Table.Th>
      <Table.Th>Catalog</Table.Th>
    </>
  );
}

function TrailRow({
  step: s,
  led,
  keyName,
  timeZone,
}: {
  step: TrailStep;
  led: TrailStep | undefined;
  keyName: string;
  timeZone: string;
}) {
  const action = ACTIONS.includes(s.kind);
  return (
    <Table.Tr data-testid="trail-row" data-kind={s.kind}>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatTimestamp(s.occurredAt, timeZone)}</Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>
        <Badge
          variant="outline"
          color={!s.ok ? 'red.9' : action ? 'teal.9' : 'indigo.9'}
          c="var(--tg-strong)"
          styles={{ root: { maxWidth: 'none' }, label: { overflow: 'visible' } }}
        >
          {KIND_LABELS[s.kind]}
        </Badge>
        {s.code && (
          <Text size="xs" c="dimmed">
            {s.code}
          </Text>
        )}
      </Table.Td>
      <Table.Td style={{ wordBreak: 'break-word' }}>
        <StepWhat step={s} led={led} />
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>{keyName}</Table.Td>
      <Table.Td ta="right">{s.tokens.toLocaleString()}</Table.Td>
      <Table.Td ta="right">{s.costMicros === null ? '—' : <Money micros={s.costMicros} />}</Table.Td>
      <Table.Td>
        <Text size="xs" ff="monospace">
          {s.catalogVersion ?? '—'}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}

/** The step in one or two lines: the query and what came back, the paths read, a script's calls. */
function StepWhat({ step: s, led }: { step: TrailStep; led: TrailStep | undefined }) {
  const d = s.detail as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  const first = (v: unknown, n = 5) => {
    const all = list(v);
    return all.length > n ? `${all.slice(0, n).join(', ')} and ${all.length - n} more` : all.join(', ');
  };
  switch (s.kind) {
    case 'SEARCH':
      return (
        <Text size="sm">
          “{String(d.query ?? '')}” → {first(d.names) || 'nothing'}
        </Text>
      );
    case 'SCHEMAS':
    case 'CATEGORIES':
    case 'TOOLS_LIST':
    case 'PROMPTS_LIST':
      return <Text size="sm">{first(d.names) || '—'}</Text>;
    case 'RESOURCES_LIST':
      return <Text size="sm">{first(d.names) || first(d.templates) || '—'}</Text>;
    case 'FILES_LIST':
    case 'FILES_READ':
    case 'DOCS_READ':
      return <Text size="sm">{first(d.paths) || first(d.names) || String(d.path ?? '—')}</Text>;
    case 'SCRIPT': {
      const calls = (Array.isArray(d.calls) ? d.calls : []) as {
        tool: string;
        line: number;
        ok: boolean;
        code?: string;
      }[];
      return (
        <Stack gap={2}>
          {calls.map((c, i) => (
            <Text size="sm" key={i} c={c.ok ? undefined : 'red.9'} data-testid="trail-script-call">
              line {c.line}: {c.tool}
              {c.ok ? '' : ` (${c.code ?? 'failed'})`}
            </Text>
          ))}
          {typeof d.failedLine === 'number' && <Text size="sm">failed at line {d.failedLine}</Text>}
          {s.readBefore && s.readBefore.length > 0 && (
            <Text size="xs" c="dimmed" data-testid="trail-read-before">
              written against {first(s.readBefore)}
            </Text>
          )}
        </Stack>
      );
    }
    default:
      return (
        <Stack gap={2}>
          <Text size="sm">{s.name}</Text>
          {led && (
            <Text size="xs" c="dimmed" data-testid="trail-led-by">
              after {KIND_LABELS[led.kind].toLowerCase()}
              {led.kind === 'SEARCH' ? ` “${String((led.detail as Record<string, unknown>).query ?? '')}”` : ''}
            </Text>
          )}
        </Stack>
      );
  }
}
