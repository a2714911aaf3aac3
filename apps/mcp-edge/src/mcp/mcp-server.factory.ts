import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  CancelledNotificationSchema,
  ElicitRequest,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { randomUUID } from 'node:crypto';
import { Principal } from '@tollgate/identity';
import { runWithCallRelay } from '@tollgate/upstream';
import { DISCLOSURE_META_KEY, ProgressiveDisclosure } from '../disclosure/progressive-disclosure.service';
import { InFlightCalls } from '../governed-call/in-flight-calls.service';
import { toolErrorOf } from '../governed-call/tool-error';
import { CatalogRelayHandlers } from './catalog-relay.handlers';
import { McpSession, McpSessionStore } from '../session/mcp-session.store';
import { AgentRequests } from './agent-requests.service';
import { agentCallRelay } from './call-relay';
import { rethrowAsProtocolError } from './dependency-unavailable';
import { AgentTrail, TRAIL_VERSION_META_KEY } from '../trail/agent-trail';

export const EDGE_SERVER_INFO = { name: 'tollgate-edge', version: '0.1.0' };

// One validator for every per-request Server: each would otherwise build its own Ajv instance.
const SHARED_SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/**
 * Builds the MCP server an agent talks to, bound to its principal. One per request in stateless
 * mode: the principal comes from the request's own credential, so any replica serves any request.
 */
@Injectable()
export class McpServerFactory {
  constructor(
    private readonly disclosure: ProgressiveDisclosure,
    private readonly inFlight: InFlightCalls,
    private readonly catalogRelay: CatalogRelayHandlers,
    private readonly sessions: McpSessionStore,
    private readonly agentRequests: AgentRequests,
    private readonly trail: AgentTrail,
  ) {}

  createServer(principal: Principal, session: McpSession | null): Server {
    const server = new Server(EDGE_SERVER_INFO, {
      // Only a session has a stream to hear `notifications/tools/list_changed` on.
      capabilities: {
        tools: { listChanged: session !== null },
        resources: { subscribe: true, listChanged: session !== null },
        prompts: { listChanged: session !== null },
        completions: {},
        logging: {},
      },
      jsonSchemaValidator: SHARED_SCHEMA_VALIDATOR,
      instructions:
        'Tools are named "<server>__<tool>". Every call is priced and metered; each result carries its cost and the remaining budget in _meta. ' +
        'If tollgate__search_tools is listed, more tools exist than are listed: search, fetch schemas, then call them directly or with tollgate__call_tool.',
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const listed = await this.disclosure.listTools(principal, session).catch(rethrowAsProtocolError);
      this.trail.toolList(principal, session, listed);
      return {
        tools: listed.tools,
        _meta: {
          [DISCLOSURE_META_KEY]: { mode: listed.mode, tokens: listed.tokens },
          ...(listed.catalogVersion ? { [TRAIL_VERSION_META_KEY]: { version: listed.catalogVersion } } : {}),
        },
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      // Aborted by this request's end, or by a cancellation that arrives in another request.
      const abort = new AbortController();
      const onAbort = () => abort.abort(extra.signal.reason);
      extra.signal.addEventListener('abort', onAbort, { once: true });
      const untrack = this.inFlight.track(principal, session?.id, extra.requestId, abort);
      // What the upstream sends during the call reaches the agent on this request's answer stream.
      const relay = agentCallRelay(this.agentRequests, {
        principal,
        session,
        requestId: extra.requestId,
        progressToken: request.params._meta?.progressToken,
        transport: server.transport!,
        sendNotification: extra.sendNotification,
        signal: abort.signal,
      });
      try {
        const result = await runWithCallRelay(relay, () =>
          this.disclosure.callTool(principal, request.params.name, request.params.arguments, abort.signal, session),
        ).catch(rethrowAsProtocolError);
        if (session?.elicitationUrl) offerConnectUrl(result, (req) => extra.sendRequest(req, ElicitResultSchema));
        return result;
      } finally {
        untrack();
        extra.signal.removeEventListener('abort', onAbort);
      }
    });
    // A cancellation names a request that runs in another POST (on this edge or another one).
    server.setNotificationHandler(CancelledNotificationSchema, async (n) => {
      if (n.params.requestId !== undefined)
        await this.inFlight.cancel(principal, session?.id, n.params.requestId, n.params.reason);
    });
    // The level filters the upstreams' log messages relayed during this session's calls.
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      if (session) await this.sessions.setLogLevel(session, request.params.level);
      return {};
    });
    // Resources, prompts and completions (tools/call keeps its own handlers above and the lean path).
    this.catalogRelay.register(server, principal, session);
    // Lists, reads and gets join the session's trail (registered over the relay's own handlers).
    server.setRequestHandler(ListResourcesRequestSchema, async () => {
      const listed = await this.catalogRelay.listResources(principal);
      const uris = listed.resources.map((r) => r.uri);
      this.trail.itemList(principal, session, 'RESOURCES_LIST', 'resources/list', uris, listed);
      return listed;
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
      const listed = await this.catalogRelay.listResourceTemplates(principal);
      const templates = listed.resourceTemplates.map((t) => t.uriTemplate);
      this.trail.itemList(principal, session, 'RESOURCES_LIST', 'resources/templates/list', templates, listed);
      return listed;
    });
    server.setRequestHandler(ListPromptsRequestSchema, async () => {
      const listed = await this.catalogRelay.listPrompts(principal);
      const names = listed.prompts.map((p) => p.name);
      this.trail.itemList(principal, session, 'PROMPTS_LIST', 'prompts/list', names, listed);
      return listed;
    });
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      this.trail.item(principal, session, 'RESOURCE_READ', request.params.uri, () =>
        this.catalogRelay.readResource(principal, request.params, extra.signal),
      ),
    );
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) => {
      const get = () =>
        this.trail.item(principal, session, 'PROMPT_GET', request.params.name, () =>
          this.catalogRelay.getPrompt(principal, request.params, extra.signal),
        );
      if (!session) return get();
      // A 2025-11-25 session's client is asked what the prompt's upstream needs meanwhile, on the
      // request's answer stream, as during a tool call. (A 2026-07-28 agent has no session: the
      // stateless handler's own relay turns such requests into input-required rounds.)
      const relay = agentCallRelay(this.agentRequests, {
        principal,
        session,
        requestId: extra.requestId,
        progressToken: undefined,
        transport: server.transport!,
        sendNotification: extra.sendNotification,
        signal: extra.signal,
      });
      return runWithCallRelay(relay, get);
    });
    return server;
  }
}

/**
 * AUTH_REQUIRED to a client that can open URLs: besides the tool result, ask it to show the user
 * the connect link (URL elicitation) on the same answer stream. The result does not wait for the
 * user; the agent calls again once they have connected.
 */
function offerConnectUrl(result: CallToolResult, sendRequest: (req: ElicitRequest) => Promise<unknown>): void {
  const error = toolErrorOf(result);
  if (error?.code !== 'AUTH_REQUIRED' || typeof error.connectUrl !== 'string') return;
  const request: ElicitRequest = {
    method: 'elicitation/create',
    params: {
      mode: 'url',
      elicitationId: randomUUID(),
      url: error.connectUrl,
      message: `Connect your ${error.upstream ?? 'upstream'} account so your agent can act as you.`,
    },
  };
  // The answer stream closes once the result is sent, which ends this request unanswered: expected.
  sendRequest(request).catch(() => undefined);
}
