import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessage,
  LoggingLevel,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/** The stateless revision the edge serves beside 2025-11-25 and earlier. */
export const STATELESS_REVISION = '2026-07-28';
/** `_meta` keys of this revision. */
export const META_PREFIX = 'io.modelcontextprotocol/';
/** How long an agent may cache a list or discovery answer; `subscriptions/listen` tells it sooner of a change. */
export const LIST_TTL_MS = 60_000;

const LOG_LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
/** Methods this revision removed (the session handshake and per-session state). */
const REMOVED_METHODS = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);
/** Results that carry caching hints: lists, discovery and resource reads. */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'resources/read',
]);
/** "Resource not found" was -32002 before this revision (SEP-2164: Invalid Params now). */
const RESOURCE_NOT_FOUND_BEFORE = -32002;

/** A refusal of this revision: the HTTP status and the JSON-RPC error. */
export class StatelessRevisionError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** One request of this revision, its envelope checked. */
export interface StatelessRequest {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  /** The client's capabilities, sent with every request. */
  clientCapabilities: Record<string, unknown>;
  logLevel?: LoggingLevel;
}

/**
 * Whether a request speaks 2026-07-28: its `MCP-Protocol-Version` header says so, or it uses a
 * method only this revision has. Anything else stays on the 2025-11-25 (and earlier) path.
 */
export function isStatelessRevisionRequest(req: IncomingMessage, body: unknown): boolean {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && version.trim() === STATELESS_REVISION) return true;
  const method = (body as { method?: unknown } | null)?.method;
  return method === 'server/discover' || method === 'subscriptions/listen';
}

/**
 * Checks what every request of this revision carries: one JSON-RPC request per POST, the version
 * in header and `_meta` alike, the client's capabilities, and routing headers that match the body
 * (`Mcp-Method`, and `Mcp-Name` for the named methods). Returns null for a notification.
 */
export function checkStatelessEnvelope(req: IncomingMessage, body: unknown): StatelessRequest | null {
  const msg = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | undefined;
  if (
    !msg ||
    typeof msg !== 'object' ||
    Array.isArray(msg) ||
    msg.jsonrpc !== '2.0' ||
    typeof msg.method !== 'string'
  ) {
    throw new StatelessRevisionError(400, ErrorCode.InvalidRequest, 'Invalid Request: one JSON-RPC request per POST');
  }
  if (msg.id === undefined) return null;
  const method = msg.method;
  const params = (typeof msg.params === 'object' && msg.params !== null ? msg.params : {}) as Record<string, unknown>;
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v.trim() : undefined;
  };
  const version = header('mcp-protocol-version');
  if (!version) throw new StatelessRevisionError(400, -32020, 'Missing MCP-Protocol-Version header');
  if (version !== STATELESS_REVISION) {
    throw new StatelessRevisionError(400, -32022, 'Unsupported protocol version', {
      supported: supportedVersions(),
      requested: version,
    });
  }
  const meta = params._meta as Record<string, unknown> | undefined;
  if (typeof meta !== 'object' || meta === null)
    throw new StatelessRevisionError(400, ErrorCode.InvalidParams, 'params._meta is required');
  if (typeof meta[`${META_PREFIX}protocolVersion`] !== 'string')
    throw new StatelessRevisionError(400, ErrorCode.InvalidParams, `_meta.${META_PREFIX}protocolVersion is required`);
  const caps = meta[`${META_PREFIX}clientCapabilities`];
  if (typeof caps !== 'object' || caps === null)
    throw new StatelessRevisionError(
      400,
      ErrorCode.InvalidParams,
      `_meta.${META_PREFIX}clientCapabilities is required`,
    );
  if (meta[`${META_PREFIX}protocolVersion`] !== version)
    throw new StatelessRevisionError(400, -32020, 'MCP-Protocol-Version header does not match _meta protocolVersion');
  if (header('mcp-method') !== method)
    throw new StatelessRevisionError(400, -32020, 'Mcp-Method header does not match the request method');
  const named =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : undefined;
  if (named !== undefined && header('mcp-name') !== named)
    throw new StatelessRevisionError(400, -32020, 'Mcp-Name header does not match the request');
  // A task's methods may name the task in Mcp-Name (SEP-2663); if they do, it must be the body's.
  const mcpName = header('mcp-name');
  if (method.startsWith('tasks/') && mcpName !== undefined && mcpName !== params.taskId)
    throw new StatelessRevisionError(400, -32020, 'Mcp-Name header does not match the task id');
  if (REMOVED_METHODS.has(method))
    throw new StatelessRevisionError(
      404,
      ErrorCode.MethodNotFound,
      `Method not found: ${method} (not part of ${STATELESS_REVISION})`,
    );
  const logLevel = meta[`${META_PREFIX}logLevel`];
  return {
    id: msg.id as string | number,
    method,
    params,
    clientCapabilities: caps as Record<string, unknown>,
    ...(typeof logLevel === 'string' && LOG_LEVELS.includes(logLevel as LoggingLevel)
      ? { logLevel: logLevel as LoggingLevel }
      : {}),
  };
}

/**
 * Each argument a tool's schema marks with `x-mcp-header` must come, equal, in its
 * `Mcp-Param-<Name>` header (plain, or `=?base64?...?=`), so intermediaries can route on it.
 */
export function checkParamHeaders(
  req: IncomingMessage,
  inputSchema: object | undefined,
  args: Record<string, unknown>,
): void {
  const properties = ((inputSchema as { properties?: unknown } | undefined)?.properties ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  for (const [arg, schema] of Object.entries(properties)) {
    const suffix = schema?.['x-mcp-header'];
    if (typeof suffix !== 'string' || args[arg] === undefined || args[arg] === null) continue;
    const v = req.headers[`mcp-param-${suffix.toLowerCase()}`];
    const raw = typeof v === 'string' ? v.trim() : undefined;
    if (raw === undefined) throw new StatelessRevisionError(400, -32020, `Mcp-Param-${suffix} header is missing`);
    const wrapped = /^=\?base64\?(.*)\?=$/i.exec(raw);
    let value = raw;
    if (wrapped) {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(wrapped[1]) || wrapped[1].length % 4 !== 0)
        throw new StatelessRevisionError(400, -32020, `Mcp-Param-${suffix} is not valid Base64`);
      value = Buffer.from(wrapped[1], 'base64').toString('utf8');
    }
    const expected = typeof args[arg] === 'object' ? JSON.stringify(args[arg]) : String(args[arg]);
    if (value !== expected)
      throw new StatelessRevisionError(400, -32020, `Mcp-Param-${suffix} header does not match arguments.${arg}`);
  }
}

/** Every revision the edge answers, newest first. */
export function supportedVersions(): string[] {
  return [STATELESS_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== STATELESS_REVISION)];
}

/** An error answer of this revision, from the edge's 2025-11-25 handlers' error. */
export function revisionError(
  method: string,
  error: { code: number; message: string; data?: unknown },
): { code: number; message: string; data?: unknown } {
  if (method === 'resources/read' && error.code === RESOURCE_NOT_FOUND_BEFORE)
    return { ...error, code: ErrorCode.InvalidParams };
  return error;
}

/** The id of a request, for an error answer that refuses it before it is understood. */
export function requestIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A result of this revision: `resultType`, and caching hints on lists (the edge's lists are per key: private). */
export function completeResult(method: string, result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { resultType: 'complete', ...result };
  if (CACHEABLE.has(method)) {
    out.ttlMs = LIST_TTL_MS;
    out.cacheScope = 'private';
    sortListed(out);
  }
  return out;
}

// Lists in a deterministic order (by name, or URI), so equal catalogs answer equal bytes.
function sortListed(result: Record<string, unknown>): void {
  for (const [field, key] of [
    ['tools', 'name'],
    ['prompts', 'name'],
    ['resources', 'uri'],
    ['resourceTemplates', 'uriTemplate'],
  ] as const) {
    const list = result[field];
    if (!Array.isArray(list)) continue;
    result[field] = [...list].sort((a, b) => {
      const x = String((a as Record<string, unknown>)[key]);
      const y = String((b as Record<string, unknown>)[key]);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
}

/** Whether a log message at `level` goes to a request that asked for `wanted` (none asked: none sent). */
export function logWanted(level: unknown, wanted: LoggingLevel | undefined): boolean {
  return wanted !== undefined && LOG_LEVELS.indexOf(level as LoggingLevel) >= LOG_LEVELS.indexOf(wanted);
}

/**
 * Carries one request into an SDK `Server` in this process and its messages back out, so the
 * stateless revision reuses the edge's 2025-11-25 handlers (and their governance) unchanged.
 */
export class OneRequestTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly sink: (message: JSONRPCMessage, options?: TransportSendOptions) => void) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sink(message, options);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/** Writes one SSE event (the head first, if not sent yet). */
export function writeEvent(res: ServerResponse, message: unknown): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}
