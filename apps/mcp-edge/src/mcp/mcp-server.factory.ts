import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { microsToJson } from '@tollgate/kernel';
import { GovernedCallPipeline, VisibleTool } from '../governed-call/governed-call.pipeline';

export const PRICE_META_KEY = 'tollgate/price';
export const EDGE_SERVER_INFO = { name: 'tollgate-edge', version: '0.1.0' };

/**
 * Builds the MCP server an agent talks to, bound to its principal. One per request in stateless
 * mode: the principal comes from the request's own credential, so any replica serves any request.
 */
@Injectable()
export class McpServerFactory {
  constructor(private readonly pipeline: GovernedCallPipeline) {}

  createServer(principal: Principal): Server {
    const server = new Server(EDGE_SERVER_INFO, {
      capabilities: { tools: {}, logging: {} },
      instructions: 'Tools are named "<server>__<tool>". Every call is priced and metered; each result carries its cost and the remaining budget in _meta.',
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: (await this.pipeline.visibleTools(principal)).map(listedTool),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
      this.pipeline.callTool(principal, request.params.name, request.params.arguments, extra.signal),
    );
    // Accepted so clients that set a level do not fail; the edge itself sends no log messages yet.
    server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
    return server;
  }
}

function listedTool({ tool, price }: VisibleTool): Tool {
  const def = tool.definition;
  return {
    ...def,
    name: tool.exposedName,
    _meta: {
      [PRICE_META_KEY]: price
        ? {
            perCallMicros: microsToJson(price.perCallMicros),
            perOutputTokenMicros: microsToJson(price.perOutputTokenMicros),
            reportedCostCapMicros: price.acceptReportedCost ? microsToJson(price.reportedCostCapMicros) : 0,
          }
        : { perCallMicros: 0, perOutputTokenMicros: 0, reportedCostCapMicros: 0 },
    },
  };
}
