import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessage, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connectUpstream } from './upstream-connector';
import { UpstreamSpec } from './upstream-spec';

const SPEC: UpstreamSpec = {
  id: 'u1',
  orgId: 'o1',
  namespace: 'chunked',
  transport: 'STDIO',
  command: 'unused',
  args: [],
  url: null,
  headers: {},
  env: {},
  callTimeoutMs: 5_000,
  version: 'v1',
};

/**
 * An upstream whose every step of a tool call is read at once: its progress notifications and its
 * answer reach the client in one batch, as lines of one chunk of a stdio pipe read late do.
 */
class OneChunkTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as { id?: number; method?: string; params?: { _meta?: { progressToken?: number } } };
    if (m.id === undefined) return;
    const chunk: JSONRPCMessage[] =
      m.method === 'initialize'
        ? [
            {
              jsonrpc: '2.0',
              id: m.id,
              result: {
                protocolVersion: LATEST_PROTOCOL_VERSION,
                capabilities: { tools: {} },
                serverInfo: { name: 'chunked', version: '1' },
              },
            },
          ]
        : [
            ...[1, 2].map((progress): JSONRPCMessage => ({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: m.params!._meta!.progressToken!, progress, total: 2 },
            })),
            { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } },
          ];
    queueMicrotask(() => chunk.forEach((reply) => this.onmessage?.(reply)));
  }
}

describe('connectUpstream', () => {
  it('should relay the progress read in the same chunk as the answer, before the answer', async () => {
    const client = await connectUpstream(SPEC, { transport: new OneChunkTransport() });
    const heard: string[] = [];
    const answer = client
      .callTool({ name: 'steps' }, undefined, { onprogress: (p) => heard.push(`progress ${p.progress}`) })
      .then(() => heard.push('answer'));
    await answer;
    expect(heard).toEqual(['progress 1', 'progress 2', 'answer']);
    await client.close();
  });
});
