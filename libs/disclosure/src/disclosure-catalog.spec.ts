import { countTokens } from '@tollgate/tokens';
import { describe, expect, it } from 'vitest';
import { DisclosureCatalog } from './disclosure-catalog';
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
          inputSchema: { type: 'object', properties: { id: { type: 'string', description: `Id of the ${entity}` } }, required: ['id'] },
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
      const schemas = catalog.getToolSchemas({ names: ['acme__get_invoice', 'nope__x', 'globex__list_chart'], maxTokens });
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
    const { answer } = catalog.searchTools({ query: 'invoice', maxTokens: 10_000, limit: 50 }, { maxTokensCeiling: 200 });
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
    expect(catalog.searchTools({ query: 'invoice', limit: 50, maxTokens: 5000 }, scope).answer.tools.every((t) => t.name.startsWith('acme__'))).toBe(true);
    expect(catalog.getToolSchemas({ names: ['globex__get_invoice'] }, scope).answer.unknown).toEqual(['globex__get_invoice']);
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
