import { All, Controller, Get, Inject, Logger, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal, PrincipalResolver } from '@tollgate/identity';
import type { Request, Response } from 'express';
import { bearerToken, edgeBaseUrl, isAllowedHost, sendUnauthorized } from './edge-auth';
import { McpSession, McpSessionStore } from '../session/mcp-session.store';
import { SessionHub } from '../session/session-hub.service';
import { readJsonBody } from './json-body';
import { LeanToolCallHandler } from './lean-tool-call.handler';
import { McpServerFactory } from './mcp-server.factory';

/**
 * MCP Streamable HTTP at /mcp: authenticate the virtual key, then answer a plain `tools/call` on
 * the lean path and hand everything else to the SDK.
 * An `initialize` opens a session (its id in `Mcp-Session-Id`, its state in Redis, so any replica
 * serves it); requests without a session id are served statelessly.
 */
@Controller()
export class McpController {
  private readonly logger = new Logger(McpController.name);

  constructor(
    private readonly principals: PrincipalResolver,
    private readonly servers: McpServerFactory,
    private readonly sessions: McpSessionStore,
    private readonly hub: SessionHub,
    private readonly leanToolCalls: LeanToolCallHandler,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  @All('mcp')
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!isAllowedHost(req, this.config.edge.allowedHosts)) {
      res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Host or Origin not allowed' }, id: null });
      return;
    }
    const secret = bearerToken(req);
    if (!secret) return sendUnauthorized(req, res, this.config.edge.publicUrl, 'missing');
    const principal = await this.principals.resolveVirtualKey(secret);
    if (!principal) return sendUnauthorized(req, res, this.config.edge.publicUrl, 'invalid');

    const sessionId = req.header('mcp-session-id');
    if (req.method === 'GET' || req.method === 'DELETE') return this.handleSessionRequest(req, res, principal, sessionId);

    // The body is read here (not by the SDK) to see whether it opens a session.
    const body = await readJsonBody(req);
    if (!body.ok) {
      res.status(body.status).json({ jsonrpc: '2.0', error: { code: body.code, message: body.message }, id: null });
      return;
    }
    let session: McpSession | null = null;
    if (sessionId) {
      session = await this.sessions.getSession(principal, sessionId);
      if (!session) return sendSessionNotFound(res);
    } else if (isInitialize(body.value)) {
      session = await this.sessions.createSession(principal, { elicitationUrl: supportsUrlElicitation(body.value) });
    }
    if (session) res.setHeader('Mcp-Session-Id', session.id);

    const leanCall = this.leanToolCalls.accepts(req, body.value, session);
    if (leanCall) return this.leanToolCalls.answer(res, principal, session, leanCall);

    const server = this.servers.createServer(principal, session);
    // Clients that can open URLs get streamed answers, so a call can offer a link before its result.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !session?.elicitationUrl });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body.value);
    } catch (err) {
      this.logger.error(`mcp request failed: ${(err as Error).message}`);
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
  }

  /** GET opens the session's notification stream; DELETE ends the session. Both need a session. */
  private async handleSessionRequest(req: Request, res: Response, principal: Principal, sessionId: string | undefined): Promise<void> {
    if (!sessionId) {
      res.status(405).setHeader('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed without an Mcp-Session-Id' }, id: null });
      return;
    }
    if (req.method === 'DELETE') {
      if (!(await this.sessions.deleteSession(principal, sessionId))) return sendSessionNotFound(res);
      res.status(200).end();
      return;
    }
    const session = await this.sessions.getSession(principal, sessionId);
    if (!session) return sendSessionNotFound(res);
    this.hub.attachStream(session.id, session.orgId, res);
  }

  /** RFC 9728 metadata: tells MCP clients this resource takes bearer virtual keys in the header. */
  @Get('.well-known/oauth-protected-resource')
  protectedResource(@Req() req: Request) {
    const base = edgeBaseUrl(req, this.config.edge.publicUrl);
    return { resource: `${base}/mcp`, authorization_servers: [], bearer_methods_supported: ['header'], resource_name: 'Tollgate MCP edge' };
  }
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}

function supportsUrlElicitation(body: unknown): boolean {
  const caps = (body as { params?: { capabilities?: { elicitation?: { url?: unknown } } } }).params?.capabilities;
  return caps?.elicitation?.url !== undefined;
}

function sendSessionNotFound(res: Response): void {
  // 404 tells MCP clients to start a new session (Streamable HTTP spec).
  res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found: initialize a new session' }, id: null });
}
