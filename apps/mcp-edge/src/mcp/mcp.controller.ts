import { Controller, Get, Inject, Req } from '@nestjs/common';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Request } from 'express';
import { edgeBaseUrl } from './edge-auth';

/** What Express serves besides /mcp (which runs on the plain Node request, see McpEndpoint). */
@Controller()
export class McpController {
  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig) {}

  /** RFC 9728 metadata: tells MCP clients this resource takes bearer virtual keys in the header. */
  @Get('.well-known/oauth-protected-resource')
  protectedResource(@Req() req: Request) {
    const base = edgeBaseUrl(req, this.config.edge.publicUrl);
    return { resource: `${base}/mcp`, authorization_servers: [], bearer_methods_supported: ['header'], resource_name: 'Tollgate MCP edge' };
  }
}
