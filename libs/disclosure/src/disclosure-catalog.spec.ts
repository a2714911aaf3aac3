import { countTokens } from '@tollgate/tokens';
import { describe, expect, it } from 'vitest';
import { DisclosureCatalog, DisclosureScope } from './disclosure-catalog';
import { decodeSearchCursor } from './disclosure-cursor';
import { DisclosureTool } from './disclosure-tool';
import { DisclosureException } from './disclosure.exception';

const VERBS = ['create', 'get', 'list', 'update', 'delete', 'search', 'export', 'archive'];
const ENTITIES = ['invoice', 'customer', 'payment', 'report', 'chart', 'ticket'];

function catalogTools(): DisclosureTool[] {
  const tools: DisclosureTool[] = [];
  for (const server of ['acme', 'globex', 'initech']) {
    for (const entity of ENTITIES) {
      for (const verb of VERBS) {
        tools.push({
          name: `${server}__${verb}_${entity}`,
          namespace: server,
          description: `${verb} a ${entity} in ${server} billing. Longer text follows here.`,
          inputSchema: {
            type: 'object',
            properties: { id: { type: 'string', description: `Id of the ${entity}` } },
            required: ['id'],
          },
          tierScore: (verb.length * 7 + entity.length) % 13,
          priceMicros: 1_500n,
          tier: 'warm',
        });
      }
    }
  }
  return tools;
}

/** Walks every page of a search, changing the catalog between pages with `mutate`. */
function walkSearch(query: string, mutate: (page: number, tools: DisclosureTool[]) => DisclosureTool[]): string[][] {
  let tools = catalogTools();
  let catalog = new DisclosureCatalog(tools);
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const { answer } = catalog.searchTools({ query, maxTokens: 300, limit: 50, cursor });
    pages.push(answer.tools.map((t) => t.name));
    if (!answer.cursor) break;
    cursor = answer.cursor;
    tools = mutate(page, tools);
    catalog = new DisclosureCatalog(tools);
  }
  return pages;
}

/** Every page of a search as the caller receives it (the JSON, cursors included). */
function searchPages(catalog: DisclosureCatalog, query: string, scope: DisclosureScope = {}): string[] {
  const pages: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const { answer, json } = catalog.searchTools({ query, maxTokens: 250, limit: 50, cursor }, scope);
    pages.push(json);
    if (!answer.cursor) break;
    cursor = answer.cursor;
  }
  return pages;
}

describe('DisclosureCatalog', () => {
  it('should page a search without repeating or skipping surviving tools when tools are added and removed between pages', () => {
    const query = 'export invoice report for a customer';
    const baseline = walkSearch(query, (_p, tools) => tools).flat();
    expect(baseline.length).toBeGreaterThan(20);
    const removed = new Set<string>();
    const pages = walkSearch(query, (page, tools) => {
      // Remove a tool not yet shown, and add a new one that matches the query.
      const victim = baseline[baseline.length - 1 - page];
      removed.add(victim);
      const added: DisclosureTool = {
        name: `zeta${page}__export_invoice`,
        namespace: `zeta${page}`,
        description: 'export invoice',
        inputSchema: { type: 'object' },
      };
      return [...tools.filter((t) => t.name !== victim), added];
    });
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    const survivors = baseline.filter((name) => !removed.has(name));
    const seenOriginal = seen.filter((name) => !name.startsWith('zeta'));
    expect(seenOriginal).toEqual(survivors);
  });

  it('should fit every answer in the budget and count its own tokens when asked', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    for (const maxTokens of [100, 250, 700]) {
      const search = catalog.searchTools({ query: 'create invoice', maxTokens });
      const schemas = catalog.getToolSchemas({
        names: ['acme__get_invoice', 'nope__x', 'globex__list_chart'],
        maxTokens,
      });
      const categories = catalog.listCategories({ maxTokens });
      for (const result of [search, schemas, categories]) {
        expect(result.answer.tokens).toBeLessThanOrEqual(maxTokens);
        expect(countTokens(result.json)).toBe(result.answer.tokens);
      }
      expect(schemas.answer.unknown).toEqual(['nope__x']);
    }
  });

  it('should cap the budget at the policy ceiling when the caller asks for more', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    const { answer } = catalog.searchTools(
      { query: 'invoice', maxTokens: 10_000, limit: 50 },
      { maxTokensCeiling: 200 },
    );
    expect(answer.tokens).toBeLessThanOrEqual(200);
    expect(answer.hasMore).toBe(true);
  });

  it('should page a schema batch by name when it does not fit at once', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    const names = ['initech__get_chart', 'acme__get_invoice', 'globex__list_report', 'acme__delete_ticket'];
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { answer } = catalog.getToolSchemas({ names, maxTokens: 120, cursor });
      seen.push(...answer.tools.map((t) => t.name));
      cursor = answer.cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...names].sort());
  });

  it('should hide tools the caller may not see when a scope is given', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    const scope = { isVisible: (name: string) => name.startsWith('acme__') };
    expect(
      catalog
        .searchTools({ query: 'invoice', limit: 50, maxTokens: 5000 }, scope)
        .answer.tools.every((t) => t.name.startsWith('acme__')),
    ).toBe(true);
    expect(catalog.getToolSchemas({ names: ['globex__get_invoice'] }, scope).answer.unknown).toEqual([
      'globex__get_invoice',
    ]);
  });

  it('should rank, score and page a search exactly alike when tools the caller cannot see are added', () => {
    const acmeOnly = { isVisible: (name: string) => name.startsWith('acme__') };
    const visibleTools = catalogTools().filter((t) => acmeOnly.isVisible(t.name));
    // Invisible tools that match the queries well, on a server of their own and on the others.
    const hidden: DisclosureTool[] = ['export_invoice_report', 'customer_invoice_export', 'report_chart'].map(
      (short) => ({
        name: `hidden__${short}`,
        namespace: 'hidden',
        description: `${short.replace(/_/g, ' ')} for a customer invoice report as a spreadsheet`,
        inputSchema: { type: 'object' },
      }),
    );
    const alone = new DisclosureCatalog(visibleTools);
    const among = new DisclosureCatalog(catalogTools());
    const amongMore = new DisclosureCatalog([...catalogTools(), ...hidden]);
    // 'spreadsheet': a word only the invisible tools have.
    for (const query of [
      'export invoice report for a customer',
      'chart',
      'delete ticket',
      'customer invoice spreadsheet',
    ]) {
      const expected = searchPages(alone, query);
      expect(expected.length).toBeGreaterThan(1);
      expect(searchPages(among, query, acmeOnly)).toEqual(expected);
      expect(searchPages(amongMore, query, acmeOnly)).toEqual(expected);
    }
    // The cursor counts only what the caller sees: 48 tools of 147.
    const { answer } = amongMore.searchTools({ query: 'export invoice report', maxTokens: 150 }, acmeOnly);
    const cursor = decodeSearchCursor(answer.cursor ?? '');
    expect(cursor.stats.docCount).toBe(visibleTools.length);
    expect(cursor.stats).toEqual(
      decodeSearchCursor(alone.searchTools({ query: 'export invoice report', maxTokens: 150 }).answer.cursor ?? '')
        .stats,
    );
  });

  it('should keep the initial tool list within its budget with the meta-tools in it', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    const initial = catalog.initialToolList({}, 600);
    expect(initial.tokens).toBeLessThanOrEqual(600);
    expect(initial.hot.length).toBeGreaterThan(0);
    expect(initial.tools.map((t) => t.name)).toContain('tollgate__search_tools');
  });

  it('should reject a cursor from another query', () => {
    const catalog = new DisclosureCatalog(catalogTools());
    const { answer } = catalog.searchTools({ query: 'invoice', maxTokens: 150 });
    expect(() => catalog.searchTools({ query: 'chart', cursor: answer.cursor })).toThrow(DisclosureException);
  });
});
