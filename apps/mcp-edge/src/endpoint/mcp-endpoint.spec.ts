import { describe, expect, it } from 'vitest';
import { isMcpRequest } from './mcp-endpoint';

describe('isMcpRequest (which requests the /mcp endpoint takes before Express)', () => {
  it('should take /mcp as Express routed it: any case, a trailing slash, a query', () => {
    for (const url of ['/mcp', '/MCP', '/Mcp/', '/mcp?x=1', '/mcp/?x=1']) expect(isMcpRequest(url)).toBe(true);
  });

  it('should leave every other path to Express', () => {
    for (const url of [
      undefined,
      '/',
      '/mc',
      '/mcpx',
      '/mcp/tools',
      '/healthz',
      '/.well-known/oauth-protected-resource',
      '/metrics',
    ])
      expect(isMcpRequest(url)).toBe(false);
  });
});
