import { Controller, Get, Inject, Req } from '@nestjs/common';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Request } from 'express';
import { EDGE_OAUTH_SCOPE, edgeBaseUrl } from './edge-auth';

/** What Express serves besides /mcp (which runs on the plain Node request, see McpEndpoint). */
@Controller()
export class McpController {
  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig) {}

  /**
   * RFC 9728 metadata, at the well-known path and its `/mcp` variant: this resource takes a
   * virtual key or an access token from Tollgate's authorization server (the admin API's URL).
   */
  @Get(['.well-known/oauth-protected-resource', '.well-known/oauth-protected-resource/mcp'])
  protectedResource(@Req() req: Request) {
    const base = edgeBaseUrl(req, this.config.edge.publicUrl);
    const issuer = this.config.oauth.issuer;
    return {
      resource: `${base}/mcp`,
      authorization_servers: issuer ? [issuer] : [],
      scopes_supported: [EDGE_OAUTH_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: 'Tollgate MCP edge',
    };
  }
}
