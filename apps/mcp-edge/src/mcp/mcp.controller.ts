import { All, Controller, Get, Inject, Logger, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrincipalResolver } from '@tollgate/identity';
import type { Request, Response } from 'express';
import { bearerToken, edgeBaseUrl, isAllowedHost, sendUnauthorized } from './edge-auth';
import { McpServerFactory } from './mcp-server.factory';

/** MCP Streamable HTTP at /mcp: authenticate the virtual key, then hand the request to the SDK. */
@Controller()
export class McpController {
  private readonly logger = new Logger(McpController.name);

  constructor(
    private readonly principals: PrincipalResolver,
    private readonly servers: McpServerFactory,
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

    const server = this.servers.createServer(principal);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      // The SDK reads and parses the body itself, so malformed JSON gets a JSON-RPC parse error.
      await transport.handleRequest(req, res);
    } catch (err) {
      this.logger.error(`mcp request failed: ${(err as Error).message}`);
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
  }

  /** RFC 9728 metadata: tells MCP clients this resource takes bearer virtual keys in the header. */
  @Get('.well-known/oauth-protected-resource')
  protectedResource(@Req() req: Request) {
    const base = edgeBaseUrl(req, this.config.edge.publicUrl);
    return { resource: `${base}/mcp`, authorization_servers: [], bearer_methods_supported: ['header'], resource_name: 'Tollgate MCP edge' };
  }
}
