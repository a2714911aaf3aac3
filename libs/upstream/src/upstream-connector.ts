import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { outboundFetch } from '@tollgate/outbound';
import { keepAliveFetch } from './keep-alive-fetch';
import { UpstreamSpec } from './upstream-spec';

export const TOLLGATE_CLIENT_INFO = { name: 'tollgate', version: '0.1.0' };

function transportFor(spec: UpstreamSpec, onStderr: (line: string) => void): Transport {
  switch (spec.transport) {
    case 'STDIO': {
      if (!spec.command) throw new Error(`upstream ${spec.namespace} has no command`);
      const t = new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        env: { ...getDefaultEnvironment(), ...spec.env },
        stderr: 'pipe',
      });
      t.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8').trimEnd()));
      return t;
    }
    // Both HTTP transports connect only to addresses the outbound rule allows.
    case 'STREAMABLE_HTTP':
      if (!spec.url) throw new Error(`upstream ${spec.namespace} has no url`);
      return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch: keepAliveFetch });
    case 'SSE':
      if (!spec.url) throw new Error(`upstream ${spec.namespace} has no url`);
      return new SSEClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch: outboundFetch() });
  }
}

/** Opens an MCP client session to an upstream (spawning the process for stdio). */
export async function connectUpstream(
  spec: UpstreamSpec,
  opts: { onStderr?: (line: string) => void; timeoutMs?: number; capabilities?: ClientCapabilities } = {},
): Promise<Client> {
  const client = new Client(TOLLGATE_CLIENT_INFO, { capabilities: opts.capabilities ?? {} });
  const transport = transportFor(spec, opts.onStderr ?? (() => undefined));
  await client.connect(transport, { timeout: opts.timeoutMs ?? spec.callTimeoutMs });
  return client;
}
