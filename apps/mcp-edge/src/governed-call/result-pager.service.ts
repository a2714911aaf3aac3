import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { READ_RESULT_PAGE_TOOL } from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';
import { countTokens, splitTextIntoPages } from '@tollgate/tokens';
import { randomBytes } from 'node:crypto';
import { ToolErrorCode, toolErrorResult } from './tool-error';

export const PAGE_META_KEY = 'tollgate/page';

/** Paged results are kept this long for the agent to read on. */
const PAGE_TTL_SECONDS = 15 * 60;

/** The call a paged result came from: what each page read is metered and priced as. */
export interface PagedCallOrigin {
  callId: string;
  exposedName: string;
  upstreamId: string;
  toolName: string;
  priceRuleId: string;
  /** The price of the original call's rule, as a decimal string (a page is charged at the price it was called at). */
  perOutputTokenMicros: string;
}

export interface PagedFirst {
  result: CallToolResult;
  pages: number;
  /** Tokens of the first page's text: what this answer delivers, and bills. */
  deliveredTokens: number;
}

/** A stored page ready to deliver, with its tokens and the call it belongs to. */
export interface StoredPage {
  origin: PagedCallOrigin;
  handle: string;
  page: number;
  pages: number;
  text: string;
  tokens: number;
}

/**
 * Large text results are cut into pages at natural boundaries (paragraph, line, sentence, word),
 * each within the output cap; the first page goes back at once with a handle and a cursor, the
 * rest wait in Redis for `tollgate__read_result_page`, readable only with the same key. The
 * stored list is the call's origin (JSON) followed by pages 2..n, so a page read is billed as
 * the call it came from.
 */
@Injectable()
export class ResultPager {
  constructor(
    private readonly redis: RedisService,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  /** Only all-text results can be cut; anything else is refused by the caller. */
  canPage(result: CallToolResult): boolean {
    return result.content.length > 0 && result.content.every((c) => c.type === 'text');
  }

  async pageResult(
    principal: Principal,
    origin: PagedCallOrigin,
    result: CallToolResult,
    capTokens: number,
  ): Promise<PagedFirst> {
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    // Leave room in each page for the note that tells the agent how to go on.
    const pages = splitTextIntoPages(text, Math.max(1, capTokens - 80), this.config.tokens.encoding);
    const handle = `${origin.callId}.${randomBytes(6).toString('hex')}`;
    const key = this.pageKey(principal, handle);
    // The token count of the result's JSON can be over the cap while its text fits one page: then
    // there is nothing to keep.
    if (pages.length > 1)
      await this.redis.client
        .multi()
        .rpush(key, JSON.stringify(origin), ...pages.slice(1))
        .expire(key, PAGE_TTL_SECONDS)
        .exec();
    return {
      result: this.pageAnswer(result, pages[0], handle, 1, pages.length),
      pages: pages.length,
      deliveredTokens: countTokens(pages[0], this.config.tokens.encoding),
    };
  }

  /** The page the arguments ask for, or the tool error to answer when there is none. */
  async findPage(
    principal: Principal,
    args: Record<string, unknown> | undefined,
  ): Promise<StoredPage | CallToolResult> {
    const handle = typeof args?.handle === 'string' ? args.handle : '';
    const page = Number(typeof args?.cursor === 'string' ? args.cursor : NaN);
    const key = this.pageKey(principal, handle);
    const [origin, text, stored] =
      Number.isInteger(page) && page >= 2
        ? await Promise.all([
            this.redis.client.lindex(key, 0),
            this.redis.client.lindex(key, page - 1),
            this.redis.client.llen(key),
          ])
        : [null, null, 0];
    if (origin === null || text === null) {
      return toolErrorResult({
        code: ToolErrorCode.InvalidRequest,
        message:
          'No such page: the handle is unknown, expired or belongs to another key, or the cursor is past the end.',
        hint: `Pages are kept ${PAGE_TTL_SECONDS / 60} minutes; call the tool again for a fresh result.`,
        tool: READ_RESULT_PAGE_TOOL,
      });
    }
    return {
      origin: JSON.parse(origin) as PagedCallOrigin,
      handle,
      page,
      pages: stored,
      text,
      tokens: countTokens(text, this.config.tokens.encoding),
    };
  }

  /** The agent's answer carrying a stored page, its note and cursor. */
  answerWithPage(page: StoredPage, meta: Record<string, unknown>): CallToolResult {
    const answer = this.pageAnswer({ content: [] }, page.text, page.handle, page.page, page.pages);
    return { ...answer, _meta: { ...answer._meta, ...meta } };
  }

  private pageAnswer(
    result: CallToolResult,
    text: string,
    handle: string,
    page: number,
    pages: number,
  ): CallToolResult {
    const more = page < pages;
    const note = more
      ? `[Page ${page} of ${pages}. The result continues: call ${READ_RESULT_PAGE_TOOL} with {"handle":"${handle}","cursor":"${page + 1}"}.]`
      : `[Page ${page} of ${pages}: the end of the result.]`;
    return {
      ...result,
      content: [
        { type: 'text', text },
        { type: 'text', text: note },
      ],
      _meta: {
        ...(result._meta ?? {}),
        [PAGE_META_KEY]: { handle, page, pages, nextCursor: more ? String(page + 1) : null },
      },
    };
  }

  private pageKey(principal: Principal, handle: string): string {
    return this.redis.orgKey(principal.orgId, 'result', principal.keyId, handle);
  }
}
