import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { DISCLOSURE_META_KEY, ProgressiveDisclosure } from '../disclosure/progressive-disclosure.service';
import { McpSession } from '../session/mcp-session.store';

export const EDGE_SERVER_INFO = { name: 'tollgate-edge', version: '0.1.0' };

/**
 * Builds the MCP server an agent talks to, bound to its principal. One per request in stateless
 * mode: the principal comes from the request's own credential, so any replica serves any request.
 */
@Injectable()
export class McpServerFactory {
  constructor(private readonly disclosure: ProgressiveDisclosure) {}

  createServer(principal: Principal, session: McpSession | null): Server {
    const server = new Server(EDGE_SERVER_INFO, {
      // Only a session has a stream to hear `notifications/tools/list_changed` on.
      capabilities: { tools: { listChanged: session !== null }, logging: {} },
      instructions:
        'Tools are named "<server>__<tool>". Every call is priced and metered; each result carries its cost and the remaining budget in _meta. ' +
        'If tollgate__search_tools is listed, more tools exist than are listed: search, fetch schemas, then call them directly or with tollgate__call_tool.',
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const listed = await this.disclosure.listTools(principal, session);
      return { tools: listed.tools, _meta: { [DISCLOSURE_META_KEY]: { mode: listed.mode, tokens: listed.tokens } } };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
      this.disclosure.callTool(principal, request.params.name, request.params.arguments, extra.signal, session),
    );
    // Accepted so clients that set a level do not fail; the edge itself sends no log messages yet.
    server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
    return server;
  }
}
