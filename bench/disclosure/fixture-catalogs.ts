import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DisclosureTool } from '@tollgate/disclosure';
import { exposedToolName } from '@tollgate/kernel';

/** The repository's `test/fixtures/catalogs`; this file runs from dist/bench/disclosure/ (or from source). */
export function fixturesDir(): string {
  const candidates = [
    path.resolve(__dirname, '../../../test/fixtures/catalogs'),
    path.resolve(__dirname, '../../test/fixtures/catalogs'),
    path.resolve(process.cwd(), 'test/fixtures/catalogs'),
  ];
  for (const dir of candidates) {
    try {
      readFileSync(path.join(dir, 'github-mcp-server.json'));
      return dir;
    } catch {
      // try the next candidate
    }
  }
  throw new Error(`fixtures not found; looked in ${candidates.join(', ')}`);
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(fixturesDir(), file), 'utf8')) as T;
}

/** Upstream server names as namespaces: lower-case letters, digits and single hyphens. */
export function toNamespace(server: string): string {
  return server
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

interface RawTool {
  name: string;
  description?: string | null;
  inputSchema?: Record<string, unknown> | null;
  annotations?: Record<string, unknown> | null;
}

function toDisclosureTool(namespace: string, raw: RawTool, extra: Partial<DisclosureTool>): DisclosureTool {
  const tool: DisclosureTool = {
    name: exposedToolName({ namespace, tool: raw.name }),
    namespace,
    inputSchema: raw.inputSchema ?? { type: 'object' },
    ...extra,
  };
  if (raw.description) tool.description = raw.description;
  if (raw.annotations) tool.annotations = raw.annotations;
  return tool;
}

/** The 117 tools of the GitHub MCP server. */
export function githubTools(): DisclosureTool[] {
  const raw = readJson<{ server: string; tools: RawTool[] }>('github-mcp-server.json');
  return raw.tools.map((t) => toDisclosureTool(toNamespace(raw.server), t, {}));
}

interface LiveMcpServer {
  name: string;
  description?: string;
  category?: string;
  tools: Record<string, { tools: RawTool[] }>;
}

/** The 527 tools of LiveMCPBench's 70 servers, with each server's category and description. */
export function liveMcpBenchTools(): DisclosureTool[] {
  const servers = readJson<LiveMcpServer[]>('livemcpbench-tools.json');
  const tools: DisclosureTool[] = [];
  for (const server of servers) {
    for (const [key, entry] of Object.entries(server.tools)) {
      const namespace = toNamespace(key);
      for (const raw of entry.tools) {
        tools.push(
          toDisclosureTool(namespace, raw, {
            category: server.category,
            serverDescription: server.description ?? server.name,
          }),
        );
      }
    }
  }
  return tools;
}

export interface LabelledTask {
  id: string;
  question: string;
  /** Tool names without server, as the annotators wrote them. */
  labels: string[];
}

/** LiveMCPBench's 95 tasks and the tools they are labelled with. */
export function liveMcpBenchTasks(): LabelledTask[] {
  const raw =
    readJson<{ task_id: string; Question: string; 'Annotator Metadata': { Tools: string } }[]>(
      'livemcpbench-tasks.json',
    );
  return raw.map((task) => ({
    id: task.task_id,
    question: task.Question,
    labels: [
      ...new Set(
        task['Annotator Metadata'].Tools.split('\n')
          .map((line) => line.replace(/^\s*\d+[.)]\s*/, '').trim())
          .filter((line) => line.length > 0),
      ),
    ],
  }));
}
