import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CallToolResult,
  CancelTaskRequestSchema,
  CancelledNotificationSchema,
  ElicitRequest,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ProgressToken,
  ReadResourceRequestSchema,
  ServerNotification,
  ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { randomUUID } from 'node:crypto';
import { Principal } from '@tollgate/identity';
import { DISCLOSURE_META_KEY, ToolDisclosure } from '../disclosure/tool-disclosure.service';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AgentCall, CallDispatcher } from '../dispatch/call-dispatcher.service';
import { TOLLGATE_REFUSAL_ERROR, ToolErrorBody, ToolErrorCode, toolErrorOf } from '../governed-call/tool-error';
import { CatalogRelayHandlers } from '../dispatch/catalog-relay.handlers';
import { McpSession, McpSessionStore } from '../session/mcp-session.store';
import { AgentRequests } from '../dispatch/agent-requests.service';
import { agentCallRelay } from '../dispatch/agent-call-relay';
import { rethrowAsProtocolError } from '../endpoint/dependency-unavailable';
import { AgentTrail, TRAIL_VERSION_META_KEY } from '../trail/agent-trail';
import { isCreatedTask, toSessionTask } from '@tollgate/tasks';
import { TaskRelay } from '../governed-call/task-relay.service';

type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

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
    private readonly disclosure: ToolDisclosure,
    private readonly dispatcher: CallDispatcher,
    private readonly catalogRelay: CatalogRelayHandlers,
    private readonly sessions: McpSessionStore,
    private readonly agentRequests: AgentRequests,
    private readonly trail: AgentTrail,
    private readonly tasks: TaskRelay,
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
        // 2025-11-25 task-augmented calls: relayed to upstreams that run them as tasks (TaskRelay).
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
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
    // Requests that reach a tool, resource or prompt go through the dispatcher; this server
    // adapts its wire format (the SDK's request, answer stream and protocol errors).
    const agentCall = (
      extra: RequestExtra,
      relayed = false,
      progressToken?: ProgressToken,
      task?: { ttl?: number },
    ): AgentCall => ({
      principal,
      session,
      requestId: extra.requestId,
      ended: extra.signal,
      // What the upstream sends during the call reaches the agent on this request's answer stream.
      ...(relayed
        ? {
            relay: (signal: AbortSignal) =>
              agentCallRelay(this.agentRequests, {
                principal,
                session,
                requestId: extra.requestId,
                progressToken,
                task,
                transport: server.transport!,
                sendNotification: extra.sendNotification,
                signal,
              }),
          }
        : {}),
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const result = await this.dispatcher
        .callTool(
          agentCall(extra, true, request.params._meta?.progressToken, request.params.task),
          request.params.name,
          request.params.arguments,
        )
        .catch(rethrowAsProtocolError);
      if (session?.elicitationUrl) offerConnectUrl(result, (req) => extra.sendRequest(req, ElicitResultSchema));
      // Asked as a task and refused (or failed) before any task existed: a JSON-RPC error (below).
      const refusal = request.params.task && !isCreatedTask(result) ? toolErrorOf(result) : undefined;
      if (refusal) throw taskRefusalError(refusal);
      // The upstream runs it as a task (the edge's own id): this revision's CreateTaskResult.
      if (isCreatedTask(result)) {
        // Its status notification goes to this session's stream when it ends.
        if (session) await this.tasks.bindSession(principal, String(result.taskId), session.id);
        return { task: toSessionTask(result), _meta: result._meta } as never;
      }
      return result;
    });
    // Polls of those tasks: free, the key's own, on any edge.
    // tasks/list: the key's own tasks, whichever session or edge made them.
    // tasks/result relays what a task waits for (its input requests) on its own answer stream.
    const taskRequest = async (method: string, params: Record<string, unknown>, extra: RequestExtra) => {
      const call = agentCall(extra, method === 'tasks/result');
      const answer = await this.dispatcher.answerSessionTask(call, method, params);
      if ('error' in answer) throw new McpError(answer.error.code, answer.error.message, answer.error.data);
      return answer.result as never;
    };
    server.setRequestHandler(GetTaskRequestSchema, (r, extra) => taskRequest(r.method, r.params, extra));
    server.setRequestHandler(GetTaskPayloadRequestSchema, (r, extra) => taskRequest(r.method, r.params, extra));
    server.setRequestHandler(CancelTaskRequestSchema, (r, extra) => taskRequest(r.method, r.params, extra));
    server.setRequestHandler(ListTasksRequestSchema, (r, extra) => taskRequest(r.method, r.params ?? {}, extra));
    // A cancellation names a request that runs in another POST (on this edge or another one).
    server.setNotificationHandler(CancelledNotificationSchema, async (n) => {
      if (n.params.requestId !== undefined)
        await this.dispatcher.cancel(principal, session?.id, n.params.requestId, n.params.reason);
    });
    // The level filters the upstreams' log messages relayed during this session's calls.
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      if (session) await this.sessions.setLogLevel(session, request.params.level);
      return {};
    });
    // A 2025-11-25 session's client is asked what a prompt's upstream needs meanwhile, on the
    // request's answer stream, as during a tool call. Without a session nothing is relayed here: a
    // 2026-07-28 agent's requests are input-required rounds, relayed by the stateless handler.
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      this.dispatcher.readResource(agentCall(extra), request.params),
    );
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      this.dispatcher.getPrompt(agentCall(extra, session !== null), request.params),
    );
    server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
      this.dispatcher.complete(agentCall(extra), request.params),
    );
    server.setRequestHandler(SubscribeRequestSchema, (request, extra) =>
      this.dispatcher.subscribe(agentCall(extra), request.params),
    );
    server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) =>
      this.dispatcher.unsubscribe(agentCall(extra), request.params),
    );
    // Lists join the session's trail.
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
    return server;
  }
}

/**
 * A 2025-11-25 task-augmented `tools/call` (`params.task`) the edge refused, or that failed before
 * its upstream made a task (policy, budget, rate limit, arguments, unknown tool, upstream down...):
 * a JSON-RPC error whose `data` is the refusal's structured body, as a refused read or get is
 * (TOLLGATE_REFUSAL_ERROR), and -32601 for a tool that lists no task support (the revision's
 * SHOULD). Why not a task: the revision says a receiver that *accepts* a task-augmented request
 * answers a CreateTaskResult, and names JSON-RPC errors for the task requests it does not accept
 * (-32601, -32600); nothing was accepted here. A result would not do either: the SDK server and
 * client both require a CreateTaskResult once `params.task` is set (a result is -32602 "Invalid task
 * creation result"). And a task made to fail at once would lose the body on the SDK 1.32 client:
 * its task stream reports a failed task as "Task <id> failed" without asking `tasks/result`, while
 * it hands a JSON-RPC error's code, message and data to the caller intact.
 */
function taskRefusalError(refusal: ToolErrorBody): McpError {
  const code = refusal.code === ToolErrorCode.TaskNotSupported ? ErrorCode.MethodNotFound : TOLLGATE_REFUSAL_ERROR;
  return new McpError(code, refusal.message, refusal);
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
