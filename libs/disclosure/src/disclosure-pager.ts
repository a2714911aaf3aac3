import { countTokens } from '@tollgate/tokens';
import { DisclosureException, DisclosureExceptionCode } from './disclosure.exception';

/** Fields every disclosure answer ends with. */
export interface PageTail {
  hasMore: boolean;
  cursor?: string;
  /** Exact o200k_base token count of this answer's own compact JSON, this field included. */
  tokens: number;
}

export type BudgetedAnswer<E extends object> = E & PageTail;

export interface BudgetedPageInput<T, E extends object> {
  /** Items still to show, in page order (already past the caller's cursor). */
  items: readonly T[];
  maxTokens: number;
  /** Most items a page may hold, whatever the budget. */
  limit?: number;
  /** The item as the answer shows it. */
  render: (item: T) => unknown;
  /** Tokens of the rendered item's JSON; the caller may cache it. */
  itemTokens: (item: T) => number;
  /** Cursor that resumes after this item. */
  cursorAfter: (item: T) => string;
  /** The answer's body around the rendered items and the items too large for any page. */
  envelope: (rendered: unknown[], tooLarge: T[]) => E;
}

export interface BudgetedPage<E extends object> {
  answer: BudgetedAnswer<E>;
  /** The answer as sent: compact JSON, `answer.tokens` counted on exactly this text. */
  json: string;
  /** How many of the input items the page consumed (shown or reported too large). */
  consumed: number;
}

const MAX_EXTRA_FITS = 2;
/** Tokens a `tooLarge` entry (a name and its size) is assumed to take before the exact count. */
const TOO_LARGE_ENTRY_ESTIMATE = 16;

/**
 * As many items as fit in `maxTokens`, counted on the final JSON. Items are estimated first
 * (cached per item), then the whole answer is counted exactly and trimmed until it fits. An item
 * that could not fit even alone is reported through `envelope`'s `tooLarge` and skipped, so
 * paging always moves forward.
 */
export function budgetedPage<T, E extends object>(input: BudgetedPageInput<T, E>): BudgetedPage<E> {
  const { items, maxTokens, itemTokens } = input;
  const limit = input.limit ?? Number.POSITIVE_INFINITY;
  const empty = finalise(input, [], [], 0);
  if (empty.answer.tokens > maxTokens) {
    throw new DisclosureException(
      DisclosureExceptionCode.BudgetTooSmall,
      `maxTokens ${maxTokens} cannot hold even an empty answer (${empty.answer.tokens} tokens).`,
      {
        maxTokens,
        minimum: empty.answer.tokens,
      },
    );
  }
  // Estimate: the empty answer plus each item and its comma; a cursor of similar size.
  const cursorEstimate = items.length ? countTokens(input.cursorAfter(items[0])) + 8 : 0;
  let used = empty.answer.tokens + cursorEstimate;
  const shown: T[] = [];
  const tooLarge: T[] = [];
  let consumed = 0;
  for (; consumed < items.length && shown.length < limit; consumed++) {
    const item = items[consumed];
    const cost = itemTokens(item) + 1;
    if (used + cost <= maxTokens) {
      shown.push(item);
      used += cost;
      continue;
    }
    if (cost > maxTokens - empty.answer.tokens - cursorEstimate) {
      tooLarge.push(item);
      used += TOO_LARGE_ENTRY_ESTIMATE;
      continue;
    }
    break;
  }
  let page = finalise(input, shown, tooLarge, consumed);
  while (page.answer.tokens > maxTokens && (shown.length > 0 || tooLarge.length > 0)) {
    // Give back the last consumed item, whichever list took it.
    const last = items[consumed - 1];
    if (shown[shown.length - 1] === last) shown.pop();
    else tooLarge.pop();
    consumed--;
    page = finalise(input, shown, tooLarge, consumed);
  }
  // The estimate errs high; use what is left for one or two more items.
  for (let extra = 0; extra < MAX_EXTRA_FITS && consumed < items.length && shown.length < limit; extra++) {
    const next = items[consumed];
    if (page.answer.tokens + itemTokens(next) + 1 > maxTokens) break;
    const candidate = finalise(input, [...shown, next], tooLarge, consumed + 1);
    if (candidate.answer.tokens > maxTokens) break;
    shown.push(next);
    consumed++;
    page = candidate;
  }
  if (page.answer.tokens > maxTokens) {
    throw new DisclosureException(
      DisclosureExceptionCode.BudgetTooSmall,
      `maxTokens ${maxTokens} cannot hold a page of this answer.`,
      { maxTokens },
    );
  }
  return page;
}

function finalise<T, E extends object>(
  input: BudgetedPageInput<T, E>,
  shown: T[],
  tooLarge: T[],
  consumed: number,
): BudgetedPage<E> {
  const hasMore = consumed < input.items.length;
  const body = input.envelope(shown.map(input.render), tooLarge);
  const tail: Omit<PageTail, 'tokens'> = { hasMore };
  if (hasMore && consumed > 0) tail.cursor = input.cursorAfter(input.items[consumed - 1]);
  return withOwnTokenCount({ ...body, ...tail }, consumed);
}

/**
 * Sets `tokens` to the count of the JSON that contains it, with one count. o200k_base splits
 * digits into their own pre-tokens of up to three digits, so the number's own cost is
 * ceil(digits / 3) tokens whatever surrounds it: count once with a one-digit placeholder, then
 * add what the real number's digits cost beyond that one token.
 */
function withOwnTokenCount<E extends object>(body: E & Omit<PageTail, 'tokens'>, consumed: number): BudgetedPage<E> {
  const base = countTokens(JSON.stringify({ ...body, tokens: 0 })) - 1;
  let tokens = base + 1;
  while (base + digitTokens(tokens) !== tokens) tokens = base + digitTokens(tokens);
  const answer = { ...body, tokens } as BudgetedAnswer<E>;
  return { answer, json: JSON.stringify(answer), consumed };
}

function digitTokens(n: number): number {
  return Math.ceil(String(n).length / 3);
}

/** The budget that applies: the caller's, never above the policy's ceiling. */
export function effectiveMaxTokens(requested: number | undefined, fallback: number, ceiling?: number): number {
  const wanted = requested ?? fallback;
  if (!Number.isInteger(wanted) || wanted <= 0) {
    throw new DisclosureException(DisclosureExceptionCode.InvalidRequest, 'maxTokens must be a positive integer.', {
      maxTokens: String(wanted),
    });
  }
  return ceiling === undefined ? wanted : Math.min(wanted, ceiling);
}
