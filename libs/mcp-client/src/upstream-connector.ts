import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { outboundFetch } from '@tollgate/outbound';
import { keepAliveFetch } from './keep-alive-fetch';
import { SpawnedStdioTransport } from './spawned-stdio-transport';
import { HttpStatelessWire } from './http-stateless-wire';
import { StdioStatelessWire } from './stdio-stateless-wire';
import { NotStatelessUpstreamError, STATELESS_REVISION, StatelessUpstreamClient } from './stateless-upstream-client';
import { TOLLGATE_CLIENT_INFO } from './upstream-client-capabilities';
import { UpstreamSpec } from './upstream-spec';

function stdioTransportFor(spec: UpstreamSpec, onStderr: (line: string) => void): StdioClientTransport {
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

function transportFor(spec: UpstreamSpec, onStderr: (line: string) => void): Transport {
  switch (spec.transport) {
    case 'STDIO':
      return stdioTransportFor(spec, onStderr);
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

/** How long the DELETE that ends a half-opened session may take. */
const SESSION_END_TIMEOUT_MS = 5_000;

/** Opens an MCP client session to an upstream (spawning the process for stdio). */
export async function connectUpstream(
  spec: UpstreamSpec,
  opts: {
    onStderr?: (line: string) => void;
    timeoutMs?: number;
    capabilities?: ClientCapabilities;
    /** Aborts the handshake (the SDK then closes the transport: a stdio process is ended). */
    signal?: AbortSignal;
    /** A transport over a stdio process already spawned (instead of spawning one). */
    transport?: Transport;
  } = {},
): Promise<Client> {
  const client = new Client(TOLLGATE_CLIENT_INFO, { capabilities: opts.capabilities ?? {} });
  const transport = opts.transport ?? transportFor(spec, opts.onStderr ?? (() => undefined));
  try {
    await client.connect(transport, { timeout: opts.timeoutMs ?? spec.callTimeoutMs, signal: opts.signal });
  } catch (err) {
    // A handshake that failed after the upstream opened a session (initialize answered, a later
    // step failed) would leave that session open on the upstream. The SDK only closes its side (and
    // aborts the transport, so its terminateSession cannot run): the DELETE is sent here.
    const sessionId = (transport as { sessionId?: string }).sessionId;
    if (sessionId && spec.transport === 'STREAMABLE_HTTP' && spec.url) {
      await keepAliveFetch(spec.url, {
        method: 'DELETE',
        headers: { ...spec.headers, 'mcp-session-id': sessionId },
        // An upstream that takes the connection but never answers must not hold the failed handshake.
        signal: AbortSignal.timeout(SESSION_END_TIMEOUT_MS),
      })
        .then((res) => res.body?.cancel())
        .catch(() => undefined);
    }
    throw err;
  }
  answerAfterNotifications(transport);
  return client;
}

/**
 * The SDK client handles a notification a microtask after it arrives, an answer at once, and
 * forgets a request's progress handler with its answer: progress read in the same chunk as the
 * answer (the upstream's last step, or every step when the edge was too busy to read the pipe in
 * between) would find no handler and be dropped. Each answer is handed on a microtask later, after
 * the notifications that came before it.
 */
function answerAfterNotifications(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    if ('method' in message) return deliver(message, extra);
    queueMicrotask(() => deliver(message, extra));
  };
}

/** An open connection to an upstream, in the revision it speaks (`protocolVersion`: the one agreed). */
export type UpstreamConnection =
  | { revision: 'session'; protocolVersion: string; client: Client }
  | {
      revision: typeof STATELESS_REVISION;
      protocolVersion: typeof STATELESS_REVISION;
      client: StatelessUpstreamClient;
    };

/**
 * How long `server/discover` may take before the upstream is tried as a 2025-11-25 server: at most
 * 10 s, and no longer than the upstream's own call timeout (an admin who says its calls end after 2 s
 * does not wait 10 s for a question a 2025-11-25 server may leave unanswered).
 */
const DISCOVER_PROBE_TIMEOUT_MS = 10_000;

/** The revision each Streamable HTTP or stdio upstream was found to speak, per settings version (so a changed URL is probed again). */
const detectedRevisions = new Map<string, UpstreamConnection['revision']>();

/** What was found about an upstream's revision, if anything yet (tests, diagnostics). */
export function detectedRevisionOf(spec: UpstreamSpec): UpstreamConnection['revision'] | undefined {
  return detectedRevisions.get(`${spec.id}:${spec.version}`);
}

/**
 * Connects in the newest revision the upstream speaks. A Streamable HTTP or stdio upstream is asked its
 * `server/discover` first: one that lists 2026-07-28 gets the stateless client, whatever else it
 * serves (an upstream may list tools and prompts only on that path). One that does not answer it
 * (a 2025-11-25 server refuses a request without a session) is initialized as 2025-11-25. What
 * was found is remembered per upstream and settings version, so the probe runs once per process;
 * `spec.revision` (what the last catalog sync found) skips the probe of an upstream known to speak
 * only an older revision. `renegotiate` probes anew (the sync, which keeps `spec.revision` current).
 * A stdio upstream is asked on the process spawned for the connection (the probe costs no second
 * spawn): see `connectStdioUpstream`. Legacy SSE upstreams are 2025-11-25 sessions.
 */
export async function connectUpstreamOfEitherRevision(
  spec: UpstreamSpec,
  opts: {
    onStderr?: (line: string) => void;
    timeoutMs?: number;
    capabilities?: ClientCapabilities;
    renegotiate?: boolean;
    signal?: AbortSignal;
  } = {},
): Promise<UpstreamConnection> {
  if (spec.transport === 'SSE') return sessionConnection(await connectUpstream(spec, opts));
  const memo = `${spec.id}:${spec.version}`;
  const timeoutMs = opts.timeoutMs ?? spec.callTimeoutMs;
  const known = opts.renegotiate
    ? undefined
    : (detectedRevisions.get(memo) ?? (spec.revision ? revisionKindOf(spec.revision) : undefined));
  if (known !== 'session' && spec.transport === 'STDIO') {
    const connection = await connectStdioUpstream(spec, opts);
    remember(memo, connection.revision);
    return connection;
  }
  if (known !== 'session') {
    try {
      if (!spec.url) throw new NotStatelessUpstreamError(`upstream ${spec.namespace} has no url`);
      const client = await StatelessUpstreamClient.discover(
        spec,
        opts.capabilities ?? {},
        Math.min(timeoutMs, spec.callTimeoutMs, DISCOVER_PROBE_TIMEOUT_MS),
        opts.signal,
        new HttpStatelessWire(spec.url),
      );
      remember(memo, STATELESS_REVISION);
      return { revision: STATELESS_REVISION, protocolVersion: STATELESS_REVISION, client };
    } catch (err) {
      // A server that leaves a method it does not know unanswered may still take initialize (if it
      // is down, initialize fails on its own).
      if (!mayStillInitialize(err, opts.signal)) throw err;
    }
  }
  const connection = sessionConnection(await connectUpstream(spec, opts));
  remember(memo, 'session');
  return connection;
}

/** After a failed `server/discover`: whether the upstream may be a 2025-11-25 server (else the error is final). */
function mayStillInitialize(err: unknown, signal: AbortSignal | undefined): boolean {
  signal?.throwIfAborted();
  const unanswered = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
  return err instanceof NotStatelessUpstreamError || unanswered;
}

/**
 * A stdio upstream in the newest revision it speaks, on one process: spawned once and asked its
 * `server/discover`; one that lists 2026-07-28 is spoken to statelessly on that process. Any other
 * answer (a 2025-11-25 server's -32601), or none in time, hands the same process to the SDK client,
 * which initializes it as 2025-11-25; the probe's late answer is dropped. A server that leaves the
 * request unanswered costs the handshake's timeout, once per process and settings version (what is
 * found is remembered, and kept by the sync as `spec.revision`).
 */
async function connectStdioUpstream(
  spec: UpstreamSpec,
  opts: Parameters<typeof connectUpstreamOfEitherRevision>[1] & object,
): Promise<UpstreamConnection> {
  const spawned = stdioTransportFor(spec, opts.onStderr ?? (() => undefined));
  await spawned.start();
  const wire = new StdioStatelessWire(spawned);
  try {
    // The whole handshake's time, not the HTTP probe's: a process still starting (an npx download,
    // a loaded host) reads the request when it is ready, and a 2026-07-28-only server asked
    // initialize instead would refuse it. A 2025-11-25 server answers -32601 at once.
    const client = await StatelessUpstreamClient.discover(
      spec,
      opts.capabilities ?? {},
      opts.timeoutMs ?? spec.callTimeoutMs,
      opts.signal,
      wire,
    );
    return { revision: STATELESS_REVISION, protocolVersion: STATELESS_REVISION, client };
  } catch (err) {
    // discover fails only as unanswered (a timeout) or not of this revision: both may initialize.
    if (wire.exited || opts.signal?.aborted) {
      await spawned.close();
      opts.signal?.throwIfAborted();
      // Exited before answering: what the SDK client says of a process that exits during initialize.
      throw wire.exited ? new McpError(ErrorCode.ConnectionClosed, 'Connection closed') : err;
    }
  }
  wire.release();
  const transport = new SpawnedStdioTransport(spawned);
  return sessionConnection(await connectUpstream(spec, { ...opts, transport }));
}

/** Whether the edge speaks 2026-07-28 to the upstream (found by this process, or by the last sync). */
export function speaksStatelessRevision(spec: UpstreamSpec): boolean {
  return (
    (detectedRevisionOf(spec) ?? (spec.revision ? revisionKindOf(spec.revision) : undefined)) === STATELESS_REVISION
  );
}

/** The kind of connection a revision needs: 2026-07-28 is stateless, anything before it a session. */
export function revisionKindOf(revision: string): UpstreamConnection['revision'] {
  return revision === STATELESS_REVISION ? STATELESS_REVISION : 'session';
}

function remember(memo: string, revision: UpstreamConnection['revision']): void {
  if (detectedRevisions.size > 10_000) detectedRevisions.clear();
  detectedRevisions.set(memo, revision);
}

function sessionConnection(client: Client): UpstreamConnection {
  // The version initialize agreed on, as the HTTP transport keeps it (stdio and SSE keep none).
  const agreed = (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion;
  return { revision: 'session', protocolVersion: agreed ?? LATEST_PROTOCOL_VERSION, client };
}
