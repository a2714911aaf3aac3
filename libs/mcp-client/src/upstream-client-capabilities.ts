import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

/**
 * What Tollgate declares to an upstream as its client: the requests the edge relays to the agent's
 * client (issue 14). Upstreams such as server-everything list some tools only to clients that
 * declare sampling or elicitation, so the catalog sync declares these to see every tool.
 */
export const UPSTREAM_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
};

/** Who Tollgate says it is, as an upstream's client. */
export const TOLLGATE_CLIENT_INFO = { name: 'tollgate', version: '0.1.0' };
