import { DisclosureTool } from '@tollgate/disclosure';
import { exposedToolName } from '@tollgate/kernel';
import { pick, seededRandom } from './seeded-random';

/**
 * Labelled synthetic tools that grow the fixture union past 2,000 tools, the way a large
 * organisation's catalog looks: many SaaS-style servers (vendor x business domain), each with
 * CRUD-like tools over a few entities. Everything comes from `seededRandom(seed)`, so a seed
 * always yields the same catalog and the same labelled queries.
 *
 * Each server is `<vendor>-<domain>`; each tool `<verb>_<entity>` with a description written
 * from a per-verb template and parameters from the entity. A labelled query per sampled tool is
 * written from a separate bank of paraphrases ("set up a new", "get rid of"...), naming the
 * vendor, so that the words of the query are not the words of the description.
 */

interface Domain {
  key: string;
  label: string;
  category: string;
  entities: string[];
}

const DOMAINS: Domain[] = [
  {
    key: 'crm',
    label: 'CRM',
    category: 'Business',
    entities: ['contact', 'deal', 'lead', 'account', 'pipeline stage'],
  },
  {
    key: 'helpdesk',
    label: 'help desk',
    category: 'Business',
    entities: ['support ticket', 'macro', 'sla policy', 'customer satisfaction survey'],
  },
  {
    key: 'hr',
    label: 'HR',
    category: 'Business',
    entities: ['employee', 'leave request', 'payroll run', 'job posting', 'performance review'],
  },
  {
    key: 'billing',
    label: 'billing',
    category: 'Finance',
    entities: ['invoice', 'subscription', 'refund', 'payment method', 'tax rate'],
  },
  {
    key: 'inventory',
    label: 'inventory',
    category: 'Business',
    entities: ['product', 'stock level', 'warehouse', 'purchase order', 'supplier'],
  },
  {
    key: 'calendar',
    label: 'calendar',
    category: 'Communication',
    entities: ['event', 'meeting room', 'availability slot', 'reminder'],
  },
  {
    key: 'mail',
    label: 'email',
    category: 'Communication',
    entities: ['email message', 'draft', 'mailbox folder', 'mail filter'],
  },
  {
    key: 'chat',
    label: 'team chat',
    category: 'Communication',
    entities: ['channel', 'chat message', 'thread', 'user group'],
  },
  {
    key: 'storage',
    label: 'cloud storage',
    category: 'File Access',
    entities: ['bucket', 'stored object', 'share link', 'retention rule'],
  },
  {
    key: 'analytics',
    label: 'analytics',
    category: 'Visualization',
    entities: ['dashboard', 'report', 'metric', 'conversion funnel', 'cohort'],
  },
  {
    key: 'marketing',
    label: 'marketing',
    category: 'Business',
    entities: ['campaign', 'audience segment', 'newsletter', 'landing page'],
  },
  {
    key: 'logistics',
    label: 'logistics',
    category: 'Location',
    entities: ['shipment', 'parcel', 'carrier', 'delivery route'],
  },
  {
    key: 'monitoring',
    label: 'monitoring',
    category: 'Code',
    entities: ['alert rule', 'incident', 'uptime check', 'on-call schedule'],
  },
  {
    key: 'database',
    label: 'database',
    category: 'Code',
    entities: ['table', 'saved query', 'index', 'backup snapshot'],
  },
  {
    key: 'cms',
    label: 'content management',
    category: 'Discovery',
    entities: ['blog post', 'web page', 'media asset', 'author'],
  },
  {
    key: 'shop',
    label: 'online store',
    category: 'Business',
    entities: ['order', 'shopping cart', 'discount coupon', 'product review'],
  },
  {
    key: 'travel',
    label: 'travel',
    category: 'Location',
    entities: ['flight booking', 'hotel reservation', 'itinerary', 'expense claim'],
  },
  {
    key: 'legal',
    label: 'legal',
    category: 'Business',
    entities: ['contract', 'signature request', 'compliance check', 'nda template'],
  },
  {
    key: 'iot',
    label: 'device fleet',
    category: 'Miscellaneous',
    entities: ['device', 'sensor reading', 'firmware update', 'gateway'],
  },
  {
    key: 'lms',
    label: 'learning',
    category: 'Miscellaneous',
    entities: ['course', 'assignment', 'grade', 'student enrollment'],
  },
];

const VENDORS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'hooli',
  'stark',
  'wayne',
  'wonka',
  'tyrell',
  'cyberdyne',
  'soylent',
  'vandelay',
  'monarch',
  'oscorp',
  'duff',
  'gringotts',
  'nakatomi',
  'virtucon',
  'aperture',
  'blackmesa',
];

interface Verb {
  key: string;
  describe: (entity: string, where: string) => string;
  /** Paraphrases for labelled queries, deliberately not the description's words. */
  ask: readonly string[];
}

const VERBS: Verb[] = [
  {
    key: 'create',
    describe: (e, w) => `Create a new ${e} in ${w}.`,
    ask: ['set up a new', 'add another', 'make a fresh'],
  },
  {
    key: 'get',
    describe: (e, w) => `Get one ${e} from ${w} by its id, with all fields.`,
    ask: ['look at a single', 'show me the details of one', 'open one'],
  },
  {
    key: 'list',
    describe: (e, w) => `List ${e}s in ${w}, newest first, with paging.`,
    ask: ['show every', 'all my', 'enumerate the'],
  },
  {
    key: 'update',
    describe: (e, w) => `Update fields of an existing ${e} in ${w}.`,
    ask: ['change an existing', 'edit a', 'modify the'],
  },
  {
    key: 'delete',
    describe: (e, w) => `Delete a ${e} from ${w} permanently.`,
    ask: ['get rid of a', 'remove a', 'permanently erase a'],
  },
  {
    key: 'search',
    describe: (e, w) => `Search ${e}s in ${w} by keyword and filters.`,
    ask: ['find', 'look for', 'hunt down'],
  },
  {
    key: 'export',
    describe: (e, w) => `Export ${e}s from ${w} as CSV.`,
    ask: ['download a spreadsheet of', 'dump to csv the', 'save a csv of'],
  },
  {
    key: 'archive',
    describe: (e, w) => `Archive a ${e} in ${w} so it no longer shows in lists.`,
    ask: ['hide an old', 'put away a stale', 'shelve an old'],
  },
];

export interface SyntheticQuery {
  query: string;
  expected: string;
}

export interface SyntheticCatalog {
  tools: DisclosureTool[];
  queries: SyntheticQuery[];
  servers: number;
}

const SNAKE = (s: string) => s.replace(/[^a-z0-9]+/g, '_');

/** `serverCount` servers of 12 to 24 tools each, and `queryCount` labelled queries. */
export function syntheticCatalog(seed: number, serverCount: number, queryCount: number): SyntheticCatalog {
  const random = seededRandom(seed);
  const tools: DisclosureTool[] = [];
  const used = new Set<string>();
  let servers = 0;
  while (servers < serverCount) {
    const domain = pick(random, DOMAINS);
    const vendor = pick(random, VENDORS);
    const namespace = `${vendor}-${domain.key}`;
    if (used.has(namespace)) continue;
    used.add(namespace);
    servers++;
    const where = `${vendor[0].toUpperCase()}${vendor.slice(1)} ${domain.label}`;
    for (const entity of domain.entities) {
      for (const verb of VERBS) {
        if (random() < 0.3) continue;
        tools.push({
          name: exposedToolName({ namespace, tool: `${verb.key}_${SNAKE(entity)}` }),
          namespace,
          description: verb.describe(entity, where),
          inputSchema: syntheticSchema(verb.key, entity),
          category: domain.category,
          serverDescription: `${where} API`,
        });
      }
    }
  }
  const queries: SyntheticQuery[] = [];
  const sampled = new Set<string>();
  while (queries.length < Math.min(queryCount, tools.length)) {
    const tool = tools[Math.floor(random() * tools.length)];
    if (sampled.has(tool.name)) continue;
    sampled.add(tool.name);
    const [, short] = tool.name.split('__');
    const verb = VERBS.find((v) => short.startsWith(`${v.key}_`));
    if (!verb) continue;
    const entity = short.slice(verb.key.length + 1).replace(/_/g, ' ');
    const vendor = tool.namespace.split('-')[0];
    queries.push({ query: `${pick(random, verb.ask)} ${entity} in ${vendor}`, expected: tool.name });
  }
  return { tools, queries, servers };
}

function syntheticSchema(verb: string, entity: string): Record<string, unknown> {
  const id = `${SNAKE(entity)}_id`;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (['get', 'update', 'delete', 'archive'].includes(verb)) {
    properties[id] = { type: 'string', description: `Id of the ${entity}` };
    required.push(id);
  }
  if (verb === 'create' || verb === 'update') {
    properties['name'] = { type: 'string', description: `Name of the ${entity}` };
    properties['fields'] = { type: 'object', description: 'Other fields to set' };
    if (verb === 'create') required.push('name');
  }
  if (verb === 'list' || verb === 'search' || verb === 'export') {
    if (verb === 'search') {
      properties['query'] = { type: 'string', description: 'Keywords' };
      required.push('query');
    }
    properties['updated_after'] = {
      type: 'string',
      format: 'date-time',
      description: 'Only items changed after this time',
    };
    properties['page_size'] = { type: 'integer', minimum: 1, maximum: 100 };
    properties['cursor'] = { type: 'string', description: 'Page cursor' };
  }
  return { type: 'object', properties, required };
}
