/**
 * Text analysis for tool search: identifiers split at snake_case, kebab-case and camelCase
 * boundaries, English stop words dropped, a light suffix stemmer, CJK runs as character
 * bigrams (some catalogs describe tools in Chinese), and query-side synonyms.
 */

const STOP_WORDS = new Set(
  (
    'a an and any are as at be been but by can could do does for from has have how i if in into is it its ' +
    'me my of on or our please should so some than that the their them then there these this those to ' +
    'us was we were what when where which while who whom why will with would you your'
  ).split(' '),
);

const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+/g;
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/;

/** Splits identifiers and prose into lower-case words (no stemming, stop words kept). */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  const spaced = text
    // camelCase and PascalCase boundaries: getRecipeById -> get Recipe By Id, HTMLParser -> HTML Parser
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  for (const raw of spaced.split(/[^A-Za-z0-9\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+/)) {
    if (raw.length === 0) continue;
    if (!CJK_CHAR.test(raw)) {
      words.push(raw.toLowerCase());
      continue;
    }
    // Mixed runs such as "12306余票": latin parts stay words, CJK parts become bigrams.
    let last = 0;
    for (const match of raw.matchAll(CJK_RUN)) {
      const start = match.index ?? 0;
      if (start > last) words.push(raw.slice(last, start).toLowerCase());
      words.push(...cjkBigrams(match[0]));
      last = start + match[0].length;
    }
    if (last < raw.length) words.push(raw.slice(last).toLowerCase());
  }
  return words;
}

function cjkBigrams(run: string): string[] {
  const chars = Array.from(run);
  if (chars.length === 1) return chars;
  const grams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i] + chars[i + 1]);
  return grams;
}

/**
 * A light English stemmer (plural, -ing, -ed, -ly and a few derivational suffixes): enough to
 * meet "charts"/"chart", "listing"/"list", "summarize"/"summary" without Porter's surprises.
 */
export function stem(word: string): string {
  if (word.length <= 3 || CJK_CHAR.test(word) || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('est') && w.length > 6 && /(tt|gg|st)est$/.test(w))
    w = w.slice(0, w.endsWith('ttest') || w.endsWith('ggest') ? -4 : -3);
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(ches|shes|xes|zes)$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undoubleConsonant(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undoubleConsonant(w.slice(0, -2));
  if (w.endsWith('ization') || w.endsWith('isation')) w = `${w.slice(0, -7)}iz`;
  else if (w.endsWith('ation') && w.length > 7) w = w.slice(0, -5);
  else if (w.endsWith('ize') || w.endsWith('ise')) w = w.slice(0, -3);
  else if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
  // Agent nouns meet their verb: reviewers/review, converter/convert, manager/manage.
  else if (/[^aeiou]er$/.test(w) && w.length > 6) w = w.slice(0, -2);
  if (w.endsWith('y') && w.length > 3) w = `${w.slice(0, -1)}i`;
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

function undoubleConsonant(w: string): string {
  const n = w.length;
  if (n > 3 && w[n - 1] === w[n - 2] && !'aeiouls'.includes(w[n - 1])) return w.slice(0, -1);
  return w;
}

/** Index-side analysis: words, stop words dropped, stemmed. */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const word of splitWords(text)) {
    if (STOP_WORDS.has(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

/**
 * Groups of words users and tool authors use for the same thing. Applied to queries only, at a
 * lower weight than the user's own words, so an exact match still ranks first.
 */
export const SEARCH_SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['repo', 'repository', 'project'],
  ['pr', 'pull', 'merge request'],
  ['issue', 'bug', 'ticket'],
  ['doc', 'document', 'docx', 'word'],
  ['docs', 'documentation', 'manual', 'reference'],
  ['image', 'picture', 'photo', 'img', 'png', 'jpg'],
  ['slide', 'slides', 'presentation', 'powerpoint', 'pptx', 'ppt', 'deck'],
  ['spreadsheet', 'excel', 'xlsx', 'sheet', 'workbook'],
  ['chart', 'graph', 'plot', 'diagram', 'visualize'],
  ['stock', 'ticker', 'share', 'equity', 'stocks'],
  ['price', 'quote', 'cost', 'value'],
  ['crypto', 'cryptocurrency', 'bitcoin', 'btc', 'ethereum', 'token', 'coin'],
  ['currency', 'forex', 'fx', 'money', 'exchange'],
  ['weather', 'forecast', 'temperature', 'rain'],
  ['directions', 'route', 'navigate', 'travel', 'drive', 'driving'],
  ['address', 'location', 'place', 'coordinates', 'geocode', 'latitude', 'longitude'],
  ['nearby', 'near', 'around', 'close'],
  ['create', 'new', 'make', 'add', 'generate', 'start'],
  ['delete', 'remove', 'erase', 'drop', 'destroy'],
  ['update', 'edit', 'modify', 'change', 'rename'],
  ['find', 'search', 'lookup', 'look', 'query', 'discover'],
  ['get', 'fetch', 'retrieve', 'read', 'show', 'see', 'view', 'open'],
  ['list', 'all', 'enumerate'],
  ['download', 'save', 'export'],
  ['summary', 'summarize', 'overview', 'abstract', 'tldr'],
  ['news', 'headlines', 'articles', 'stories'],
  ['trending', 'popular', 'hot', 'top', 'rank', 'ranking', 'leaderboard'],
  ['paper', 'papers', 'preprint', 'publication', 'research', 'academic'],
  ['transcript', 'subtitles', 'captions'],
  ['video', 'youtube', 'clip'],
  ['song', 'music', 'audio', 'track'],
  ['browser', 'web', 'page', 'website', 'site', 'url'],
  ['screenshot', 'capture', 'snapshot'],
  ['folder', 'directory', 'dir'],
  ['file', 'files'],
  ['process', 'command', 'terminal', 'shell'],
  ['kill', 'terminate', 'stop'],
  ['container', 'docker'],
  ['package', 'library', 'dependency', 'module', 'npm'],
  ['vulnerability', 'vulnerabilities', 'security', 'cve', 'advisory'],
  ['calendar', 'date', 'day'],
  ['time', 'clock', 'timezone'],
  ['random', 'shuffle', 'dice', 'lottery'],
  ['translate', 'translation', 'language'],
  ['email', 'mail', 'inbox'],
  ['message', 'chat', 'send'],
  ['note', 'notes', 'memo'],
  ['task', 'todo', 'to-do'],
  ['train', 'railway', 'rail'],
  ['rental', 'listing', 'lodging', 'accommodation', 'stay', 'airbnb'],
  ['game', 'match', 'esports'],
  ['player', 'summoner', 'user'],
  ['dataset', 'data', 'open data'],
  ['calculate', 'compute', 'math', 'arithmetic', 'expression'],
  ['diff', 'difference', 'differences', 'compare', 'changes'],
  ['merge', 'combine', 'join'],
  ['split', 'separate'],
  ['convert', 'transform', 'turn'],
  ['pdf', 'acrobat'],
  ['markdown', 'md'],
  ['notification', 'notifications', 'alerts', 'inbox'],
  ['commit', 'commits', 'history', 'log'],
  ['law', 'legal', 'regulation'],
  ['dividend', 'payout'],
  ['fork', 'copy', 'clone', 'duplicate'],
  ['secret', 'password', 'credential', 'api key', 'leak', 'leaked'],
  ['me', 'my account', 'signed in', 'logged in', 'authenticated', 'whoami'],
  ['alternative', 'replacement', 'substitute', 'instead'],
  ['hierarchy', 'organization', 'org chart', 'reporting line'],
  ['insider', 'executive', 'director', 'officer'],
  ['apartment', 'holiday', 'vacation', 'rental'],
  ['tempo', 'bpm', 'beats per minute'],
  ['collaborator', 'access', 'permission', 'member'],
  ['icon', 'symbol', 'glyph'],
  ['capitalization', 'market cap', 'valuation'],
  ['financial', 'finance', 'earnings', 'income'],
];

/**
 * What a tool does to its object, read from the first word of its name and from the user's verbs:
 * a query that asks to delete should not be answered by a tool that creates, and vice versa.
 * Reading verbs (get, list, search) are one class: users use them interchangeably.
 */
export const ACTION_CLASSES: Readonly<Record<string, readonly string[]>> = {
  create: ['create', 'new', 'make', 'add', 'generate'],
  delete: ['delete', 'remove', 'erase', 'drop', 'destroy'],
  update: ['update', 'edit', 'modify', 'change', 'rename', 'set'],
  read: [
    'get',
    'fetch',
    'retrieve',
    'read',
    'show',
    'see',
    'view',
    'list',
    'enumerate',
    'find',
    'search',
    'lookup',
    'look',
    'query',
  ],
};

/** Action class keyed by stemmed verb. */
export function buildActionMap(
  classes: Readonly<Record<string, readonly string[]>> = ACTION_CLASSES,
): Map<string, string> {
  const map = new Map<string, string>();
  for (const [action, verbs] of Object.entries(classes)) for (const verb of verbs) map.set(stem(verb), action);
  return map;
}

/** Synonym lookup keyed by stemmed term, built once. */
export function buildSynonymMap(groups: readonly (readonly string[])[] = SEARCH_SYNONYM_GROUPS): Map<string, string[]> {
  const map = new Map<string, Set<string>>();
  for (const group of groups) {
    const stems = group.map((phrase) => analyze(phrase)).filter((terms) => terms.length > 0);
    for (const terms of stems) {
      for (const term of terms) {
        let set = map.get(term);
        if (!set) map.set(term, (set = new Set()));
        for (const other of stems) for (const t of other) if (t !== term) set.add(t);
      }
    }
  }
  const out = new Map<string, string[]>();
  for (const [term, set] of map) out.set(term, [...set].sort());
  return out;
}
