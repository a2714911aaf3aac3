import { DisclosureTool, JsonSchema } from './disclosure-tool';

export const DEFAULT_SUMMARY_CHARS = 100;
const PARAM_DESCRIPTION_CHARS = 60;

/** One parameter as a search answer shows it. */
export interface SimplifiedParameter {
  name: string;
  type: string;
  required: boolean;
  description?: string;
}

/**
 * First sentence of a description on one line, cut at a word boundary to `maxChars`
 * (an ellipsis marks the cut).
 */
export function oneLineSummary(description: string | undefined, maxChars = DEFAULT_SUMMARY_CHARS): string {
  if (!description) return '';
  const flat = description.replace(/\s+/g, ' ').trim();
  // A sentence ends at . ! ? (or the Chinese full stop) followed by a space or the end.
  const end = flat.search(/[.!?](\s|$)|[。！？]/);
  const sentence = (end >= 0 ? flat.slice(0, end + 1) : flat).trim();
  return truncate(sentence, maxChars);
}

function truncate(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  const cut = chars.slice(0, maxChars - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

/** Top-level parameters with a short type, required first, then in schema order. */
export function simplifyParameters(schema: JsonSchema): SimplifiedParameter[] {
  const properties = asRecord(schema['properties']);
  if (!properties) return [];
  const required = new Set(
    Array.isArray(schema['required'])
      ? (schema['required'] as unknown[]).filter((r): r is string => typeof r === 'string')
      : [],
  );
  const params = Object.entries(properties).map(([name, value]): SimplifiedParameter => {
    const prop = asRecord(value) ?? {};
    const param: SimplifiedParameter = { name, type: shortType(prop), required: required.has(name) };
    const description =
      typeof prop['description'] === 'string' ? oneLineSummary(prop['description'], PARAM_DESCRIPTION_CHARS) : '';
    if (description) param.description = description;
    return param;
  });
  return [...params.filter((p) => p.required), ...params.filter((p) => !p.required)];
}

/** Parameters as a compact signature: `owner: string, repo: string, page?: number`. */
export function parameterSignature(params: readonly SimplifiedParameter[]): string {
  return params.map((p) => `${p.name}${p.required ? '' : '?'}: ${p.type}`).join(', ');
}

function shortType(prop: Record<string, unknown>): string {
  if (Array.isArray(prop['enum'])) {
    const values = (prop['enum'] as unknown[]).map((v) => JSON.stringify(v));
    return values.length <= 4 ? values.join('|') : `${values.slice(0, 3).join('|')}|…`;
  }
  const type = prop['type'];
  if (Array.isArray(type)) return type.filter((t) => t !== 'null').join('|') || 'unknown';
  if (type === 'array') {
    const items = asRecord(prop['items']);
    return `${items ? shortType(items) : 'unknown'}[]`;
  }
  if (typeof type === 'string') return type === 'integer' ? 'number' : type;
  const variants = (prop['anyOf'] ?? prop['oneOf']) as unknown;
  if (Array.isArray(variants)) {
    return (
      [...new Set(variants.map((v) => shortType(asRecord(v) ?? {})).filter((t) => t !== 'null'))].join('|') || 'unknown'
    );
  }
  return asRecord(prop['properties']) ? 'object' : 'unknown';
}

/** Categories the guesser can assign, with the words that point to each. */
const CATEGORY_KEYWORDS: readonly [string, readonly string[]][] = [
  [
    'Code',
    [
      'repository',
      'repo',
      'commit',
      'branch',
      'pull',
      'issue',
      'code',
      'npm',
      'package',
      'git',
      'docker',
      'container',
      'workflow',
      'release',
      'gist',
      'dependency',
      'library',
      'component',
    ],
  ],
  [
    'Finance',
    [
      'stock',
      'ticker',
      'finance',
      'financial',
      'crypto',
      'currency',
      'exchange',
      'dividend',
      'market',
      'invoice',
      'payment',
      'price',
    ],
  ],
  ['File Access', ['file', 'directory', 'folder', 'pdf', 'document', 'docx', 'excel', 'spreadsheet', 'sheet']],
  [
    'Visualization',
    ['chart', 'diagram', 'graph', 'image', 'icon', 'slide', 'presentation', 'svg', 'canvas', 'drawing'],
  ],
  ['Location', ['map', 'geocode', 'route', 'address', 'location', 'coordinates', 'place']],
  ['Entertainment', ['game', 'champion', 'chess', 'music', 'movie', 'player', 'card']],
  ['Communication', ['email', 'message', 'chat', 'channel', 'slack', 'notification', 'comment']],
  ['Discovery', ['search', 'news', 'trending', 'wiki', 'wikipedia', 'article', 'paper', 'web']],
];

export const FALLBACK_CATEGORY = 'Miscellaneous';

/**
 * The tool's category: the one it was registered with, else the category whose keywords its
 * name and description mention most (first in `CATEGORY_KEYWORDS` order on a tie).
 */
export function guessCategory(tool: Pick<DisclosureTool, 'name' | 'description' | 'category'>): string {
  if (tool.category) return tool.category;
  const words = `${tool.name.replace(/[_-]+/g, ' ')} ${tool.description ?? ''}`.toLowerCase().split(/[^a-z0-9]+/);
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  let best = FALLBACK_CATEGORY;
  let bestScore = 0;
  for (const [category, keywords] of CATEGORY_KEYWORDS) {
    let score = 0;
    for (const keyword of keywords) score += counts.get(keyword) ?? 0;
    if (score > bestScore) {
      best = category;
      bestScore = score;
    }
  }
  return best;
}

/**
 * A TypeScript declaration of the tool for code mode: a doc line and a typed `args` object.
 * `function github__get_me(args: {}): Promise<unknown>;`
 */
export function typedStub(tool: Pick<DisclosureTool, 'name' | 'description' | 'inputSchema'>): string {
  const doc = oneLineSummary(tool.description, 160).replace(/\*\//g, '*\\/');
  const identifier = tool.name.replace(/[^A-Za-z0-9_$]/g, '_').replace(/^(\d)/, '_$1');
  const lines = doc ? [`/** ${doc} */`] : [];
  lines.push(`function ${identifier}(args: ${tsType(tool.inputSchema, 0)}): Promise<unknown>;`);
  return lines.join('\n');
}

const MAX_STUB_DEPTH = 3;

function tsType(schema: Record<string, unknown>, depth: number): string {
  if (Array.isArray(schema['enum']))
    return (schema['enum'] as unknown[]).map((v) => JSON.stringify(v)).join(' | ') || 'never';
  if ('const' in schema) return JSON.stringify(schema['const']);
  const variants = (schema['anyOf'] ?? schema['oneOf']) as unknown;
  if (Array.isArray(variants))
    return variants.map((v) => tsType(asRecord(v) ?? {}, depth + 1)).join(' | ') || 'unknown';
  const type = schema['type'];
  if (Array.isArray(type)) return type.map((t) => tsType({ ...schema, type: t }, depth)).join(' | ');
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const items = asRecord(schema['items']);
      const inner = items ? tsType(items, depth + 1) : 'unknown';
      return /[|&\s]/.test(inner) && !inner.startsWith('{') ? `(${inner})[]` : `${inner}[]`;
    }
    default: {
      const properties = asRecord(schema['properties']);
      if (!properties) return type === 'object' || depth === 0 ? 'Record<string, unknown>' : 'unknown';
      if (depth >= MAX_STUB_DEPTH) return 'Record<string, unknown>';
      const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
      const members = Object.entries(properties).map(([name, value]) => {
        const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
        return `${key}${required.has(name) ? '' : '?'}: ${tsType(asRecord(value) ?? {}, depth + 1)}`;
      });
      return members.length ? `{ ${members.join('; ')} }` : '{}';
    }
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
