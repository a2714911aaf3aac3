import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A real MCP SDK client connected to the edge with a virtual key, as an agent would be. */
export async function connectAgent(edgeUrl: string, key: string, name = 'test-agent'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** The structured body of a refused or failed call (`_meta["tollgate/error"]`). */
export function toolError(
  result: CallToolResult,
): { code: string; message: string; hint: string; [k: string]: unknown } | undefined {
  return result._meta?.['tollgate/error'] as never;
}

export function callMeta(
  result: CallToolResult,
): { callId: string; costMicros: number; outputTokens: number } | undefined {
  return result._meta?.['tollgate/call'] as never;
}

export function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}
