import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { outboundFetch } from '@tollgate/outbound';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { keepAliveFetch } from './keep-alive-fetch';
import { NotStatelessUpstreamError, STATELESS_REVISION, StatelessUpstreamClient } from './stateless-upstream-client';
import { TOLLGATE_CLIENT_INFO } from './upstream-client-capabilities';
import { UpstreamSpec } from './upstream-spec';

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
      return new StreamableHTTPClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers },
        fetch: keepAliveFetch,
      });
    case 'SSE':
      if (!spec.url) throw new Error(`upstream ${spec.namespace} has no url`);
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers },
        fetch: outboundFetch(),
      });
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

/** An open connection to an upstream, in the revision it speaks. */
export type UpstreamConnection =
  { revision: 'session'; client: Client } | { revision: typeof STATELESS_REVISION; client: StatelessUpstreamClient };

/** The revision each Streamable HTTP upstream was found to speak, per settings version (so a changed URL is probed again). */
const detectedRevisions = new Map<string, UpstreamConnection['revision']>();

/** What was found about an upstream's revision, if anything yet (tests, diagnostics). */
export function detectedRevisionOf(spec: UpstreamSpec): UpstreamConnection['revision'] | undefined {
  return detectedRevisions.get(`${spec.id}:${spec.version}`);
}

/**
 * Connects in the revision the upstream speaks. A Streamable HTTP upstream is first initialized as
 * 2025-11-25 (what every upstream so far speaks, and what keeps the lean call path); if it refuses
 * initialize with an HTTP 4xx, its `server/discover` is asked, and a 2026-07-28 upstream gets the
 * stateless client. The answer is remembered per upstream, so the probe runs once per process.
 */
export async function connectUpstreamOfEitherRevision(
  spec: UpstreamSpec,
  opts: { onStderr?: (line: string) => void; timeoutMs?: number; capabilities?: ClientCapabilities } = {},
): Promise<UpstreamConnection> {
  const memo = `${spec.id}:${spec.version}`;
  const timeoutMs = opts.timeoutMs ?? spec.callTimeoutMs;
  if (spec.transport === 'STREAMABLE_HTTP' && detectedRevisions.get(memo) === STATELESS_REVISION) {
    return {
      revision: STATELESS_REVISION,
      client: await StatelessUpstreamClient.discover(spec, opts.capabilities ?? {}, timeoutMs),
    };
  }
  try {
    const client = await connectUpstream(spec, opts);
    if (detectedRevisions.size > 10_000) detectedRevisions.clear();
    detectedRevisions.set(memo, 'session');
    return { revision: 'session', client };
  } catch (err) {
    // Only an HTTP upstream that answered initialize with a client error may speak the other revision.
    const refused =
      err instanceof StreamableHTTPError &&
      err.code !== undefined &&
      err.code >= 400 &&
      err.code < 500 &&
      err.code !== 401 &&
      err.code !== 403;
    if (spec.transport !== 'STREAMABLE_HTTP' || !refused) throw err;
    try {
      const client = await StatelessUpstreamClient.discover(spec, opts.capabilities ?? {}, timeoutMs);
      detectedRevisions.set(memo, STATELESS_REVISION);
      return { revision: STATELESS_REVISION, client };
    } catch (discoverErr) {
      if (discoverErr instanceof NotStatelessUpstreamError) throw err;
      throw discoverErr;
    }
  }
}
