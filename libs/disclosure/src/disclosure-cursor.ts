import { DisclosureException, DisclosureExceptionCode } from './disclosure.exception';
import { SearchHit, SearchStats } from './tool-search-index';

/**
 * Keyset cursors. A cursor names the last item a page held (and, for search, the statistics the
 * ranking used), never an offset, so tools added or removed between two pages neither repeat
 * nor skip the tools that remain. Plain text rather than base64: an agent reads every cursor,
 * and base64 costs about three times the tokens. Clients must treat it as opaque.
 */
const SEPARATOR = '~';
const NAME_CURSOR_VERSION = 'n1';
const SEARCH_CURSOR_VERSION = 's1';

export interface SearchCursor {
  /** Short hash of the query and filters the cursor belongs to. */
  check: string;
  after: SearchHit;
  stats: SearchStats;
}

/** Cursor after an item of a list sorted by name (categories, schema batches). */
export function encodeNameCursor(after: string): string {
  return `${NAME_CURSOR_VERSION}${SEPARATOR}${after}`;
}

export function decodeNameCursor(cursor: string): string {
  const prefix = `${NAME_CURSOR_VERSION}${SEPARATOR}`;
  if (!cursor.startsWith(prefix) || cursor.length === prefix.length) throw invalidCursor();
  return cursor.slice(prefix.length);
}

export function encodeSearchCursor(cursor: SearchCursor): string {
  const { check, after, stats } = cursor;
  return [
    SEARCH_CURSOR_VERSION,
    check,
    String(after.score),
    String(stats.docCount),
    stats.avgLengths.join(','),
    // Zero frequencies are left empty: most synonyms match nothing in a given catalog.
    stats.docFrequencies.map((df) => (df === 0 ? '' : String(df))).join(','),
    after.name,
  ].join(SEPARATOR);
}

export function decodeSearchCursor(cursor: string): SearchCursor {
  const parts = cursor.split(SEPARATOR);
  if (parts.length < 7 || parts[0] !== SEARCH_CURSOR_VERSION) throw invalidCursor();
  const [, check, score, docCount, avgLengths, docFrequencies] = parts;
  const name = parts.slice(6).join(SEPARATOR);
  const stats: SearchStats = {
    docCount: Number(docCount),
    avgLengths: avgLengths.split(',').map(Number),
    docFrequencies: docFrequencies.split(',').map((df) => (df === '' ? 0 : Number(df))),
  };
  const after: SearchHit = { name, score: Number(score) };
  const numbers = [after.score, stats.docCount, ...stats.avgLengths, ...stats.docFrequencies];
  if (!name || numbers.some((n) => !Number.isFinite(n) || n < 0) || !Number.isInteger(after.score))
    throw invalidCursor();
  return { check, after, stats };
}

function invalidCursor(): DisclosureException {
  return new DisclosureException(
    DisclosureExceptionCode.InvalidCursor,
    'The cursor is not one this server issued; repeat the request without it.',
  );
}
