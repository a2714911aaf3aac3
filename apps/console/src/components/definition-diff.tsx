import { Badge, Box, Group, Stack, Text } from '@mantine/core';
import type { ToolDiff } from '../api/governance-types';
import { DiffRow, lineDiff, prettyJson } from '../lib/line-diff';

/**
 * The parts of a tool definition the API's diff names, as the pinned (left) and latest (right)
 * JSON: title, description, each changed input property's schema, added/removed properties and
 * required lists. Both sides are sorted pretty JSON, so only real changes differ.
 */
export function diffSides(d: ToolDiff): { pinned: string; latest: string } {
  const pinned: Record<string, unknown> = {};
  const latest: Record<string, unknown> = {};
  if (d.title) {
    pinned.title = d.title.before;
    latest.title = d.title.after;
  }
  if (d.description) {
    pinned.description = d.description.before;
    latest.description = d.description.after;
  }
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const c of d.inputSchema.changed) {
    before[c.name] = c.before;
    after[c.name] = c.after;
  }
  for (const name of d.inputSchema.removed) before[name] = '(present)';
  for (const name of d.inputSchema.added) after[name] = '(new property)';
  if (Object.keys(before).length || Object.keys(after).length) {
    pinned.inputSchemaProperties = before;
    latest.inputSchemaProperties = after;
  }
  if (d.inputSchema.required) {
    pinned.required = d.inputSchema.required.before;
    latest.required = d.inputSchema.required.after;
  }
  return { pinned: d.pinnedHash ? prettyJson(pinned) : '', latest: prettyJson(latest) };
}

const BG: Record<DiffRow['kind'], [string | undefined, string | undefined]> = {
  same: [undefined, undefined],
  removed: ['var(--mantine-color-red-0)', undefined],
  added: [undefined, 'var(--mantine-color-green-0)'],
  changed: ['var(--mantine-color-red-0)', 'var(--mantine-color-green-0)'],
};

/** Side by side: pinned on the left, latest on the right; changed lines marked, not only coloured. */
export function DefinitionDiff({ diff }: { diff: ToolDiff }) {
  const { pinned, latest } = diffSides(diff);
  const rows = lineDiff(pinned, latest);
  const cell = (text: string | null, bg: string | undefined, mark: string, side: string) => (
    <Box
      component="td"
      data-side={side}
      style={{
        background: bg,
        fontFamily: 'var(--mantine-font-family-monospace)',
        fontSize: 12,
        whiteSpace: 'pre-wrap',
        wordBreak: 'break-word',
        verticalAlign: 'top',
        padding: '1px 6px',
        width: '50%',
      }}
    >
      {text !== null && bg ? (
        <span aria-label={mark}>{mark === 'removed' ? '− ' : '+ '}</span>
      ) : text !== null ? (
        '  '
      ) : (
        ''
      )}
      {text ?? ''}
    </Box>
  );
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Badge variant="outline" color="gray.8" c="var(--tg-strong)">
          pinned {diff.pinnedHash ? diff.pinnedHash.slice(0, 12) : 'none (never approved)'}
        </Badge>
        <Badge variant="outline" color="gray.8" c="var(--tg-strong)">
          latest {diff.definitionHash.slice(0, 12)}
        </Badge>
        <Text size="xs" c="dimmed">
          {diff.tool.schemaTokens} → {diff.latestSchemaTokens} tokens in a tools/list
        </Text>
      </Group>
      {diff.otherChanges.length > 0 && (
        <Text size="sm" data-testid="diff-other-changes">
          Also changed: {diff.otherChanges.join(', ')}
        </Text>
      )}
      <Box style={{ overflowX: 'auto', border: '1px solid var(--mantine-color-gray-4)', borderRadius: 4 }}>
        <table
          style={{ borderCollapse: 'collapse', width: '100%', tableLayout: 'fixed' }}
          data-testid="definition-diff"
        >
          <thead>
            <tr>
              <th style={{ textAlign: 'left', padding: '4px 6px' }}>Pinned (served now)</th>
              <th style={{ textAlign: 'left', padding: '4px 6px' }}>Latest from the upstream</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i} data-kind={r.kind}>
                {cell(r.left, BG[r.kind][0], 'removed', 'pinned')}
                {cell(r.right, BG[r.kind][1], 'added', 'latest')}
              </tr>
            ))}
          </tbody>
        </table>
      </Box>
    </Stack>
  );
}
