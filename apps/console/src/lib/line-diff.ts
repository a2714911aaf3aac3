/** A side-by-side line diff (LCS) of two short texts, e.g. pretty-printed JSON of a tool definition. */
export type DiffRow =
  | { kind: 'same'; left: string; right: string }
  | { kind: 'removed'; left: string; right: null }
  | { kind: 'added'; left: null; right: string }
  | { kind: 'changed'; left: string; right: string };

/** Definitions are small (hundreds of lines), so the quadratic LCS table is fine. */
export function lineDiff(before: string, after: string): DiffRow[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: DiffRow[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: 'same', left: a[i++], right: b[j++] });
    else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1]))
      ops.push({ kind: 'removed', left: a[i++], right: null });
    else ops.push({ kind: 'added', left: null, right: b[j++] });
  }
  return pairChanges(ops);
}

/** A run of removals followed by additions is shown as changed lines, side by side. */
function pairChanges(ops: DiffRow[]): DiffRow[] {
  const out: DiffRow[] = [];
  for (let k = 0; k < ops.length;) {
    if (ops[k].kind !== 'removed') {
      out.push(ops[k++]);
      continue;
    }
    const removed: string[] = [];
    while (k < ops.length && ops[k].kind === 'removed') removed.push(ops[k++].left as string);
    const added: string[] = [];
    while (k < ops.length && ops[k].kind === 'added') added.push(ops[k++].right as string);
    for (let n = 0; n < Math.max(removed.length, added.length); n++) {
      if (n < removed.length && n < added.length) out.push({ kind: 'changed', left: removed[n], right: added[n] });
      else if (n < removed.length) out.push({ kind: 'removed', left: removed[n], right: null });
      else out.push({ kind: 'added', left: null, right: added[n] });
    }
  }
  return out;
}

/** Stable pretty JSON (keys sorted) so that only real changes show as differing lines. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) ?? '';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}
