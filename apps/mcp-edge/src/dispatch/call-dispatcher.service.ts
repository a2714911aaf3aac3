import { Injectable } from '@nestjs/common';
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptRequest,
  GetPromptResult,
  ReadResourceRequest,
  ReadResourceResult,
  RequestId,
  SubscribeRequest,
  UnsubscribeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { UpstreamCallRelay, runWithCallRelay } from '@tollgate/mcp-client';
import { CatalogRelayHandlers } from './catalog-relay.handlers';
import { McpSession } from '../session/mcp-session.store';
import { AgentTrail } from '../trail/agent-trail';
import { InFlightCalls } from './in-flight-calls.service';
import { ToolRouter } from './tool-router.service';
import { TaskAnswer, TaskRelay } from '../governed-call/task-relay.service';

/** An agent request that reaches a tool, a resource or a prompt, as its transport hands it over. */
export interface AgentCall {
  principal: Principal;
  /** The 2025-11-25 session the request belongs to, if any. */
  session: McpSession | null;
  /** The agent's JSON-RPC id: what its `notifications/cancelled` names. */
  requestId: RequestId;
  /** Aborted when the transport can no longer answer: the agent hung up, or its round expired. */
  ended?: AbortSignal;
  /**
   * Instead of `ended`: the transport's own controller, which it aborts when it can no longer
   * answer; the call runs on its signal and a cancellation aborts it too (one controller a call,
   * not a second one tied to the first by a listener). The transport tells a hang-up from a
   * cancellation itself.
   */
  abort?: AbortController;
  /**
   * How what the upstream sends during the call (progress, log messages, requests to the client)
   * reaches the agent on this transport, given the call's own signal; none: the relay in force.
   */
  relay?: (signal: AbortSignal) => UpstreamCallRelay;
}

/**
 * The one way an agent request reaches a tool, resource or prompt, whatever its transport (the
 * 2025-11-25 SDK server, the lean path, 2026-07-28 stateless). It owns the call's abort (the
 * transport's end, or the agent's cancellation arriving in another request, on any edge), its
 * in-flight record (InFlightCalls), the relay of what the upstream sends meanwhile, and the call's
 * completion (the record dropped and the listeners detached however it ends). The transports only
 * adapt wire formats: they parse the request, and turn the result or error into their answer.
 * A task's polls come here too (answerTask), though they reach no tool: their waits end the same way.
 */
@Injectable()
export class CallDispatcher {
  constructor(
    private readonly router: ToolRouter,
    private readonly items: CatalogRelayHandlers,
    private readonly inFlight: InFlightCalls,
    private readonly trail: AgentTrail,
    private readonly tasks: TaskRelay,
  ) {}

  /** `tools/call`: routed by ToolRouter (the governed call, a discovery tool, code mode or a result page). */
  callTool(call: AgentCall, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    return this.dispatch(call, (signal) => this.router.callTool(call.principal, name, args, signal, call.session));
  }

  /** `resources/read`, governed (GovernedItemPipeline) and recorded in the agent's trail. */
  readResource(call: AgentCall, params: ReadResourceRequest['params']): Promise<ReadResourceResult> {
    return this.dispatch(call, (signal) =>
      this.trail.item(call.principal, call.session, 'RESOURCE_READ', params.uri, () =>
        this.items.readResource(call.principal, params, signal),
      ),
    );
  }

  /** `prompts/get`, governed (GovernedItemPipeline) and recorded in the agent's trail. */
  getPrompt(call: AgentCall, params: GetPromptRequest['params']): Promise<GetPromptResult> {
    return this.dispatch(call, (signal) =>
      this.trail.item(call.principal, call.session, 'PROMPT_GET', params.name, () =>
        this.items.getPrompt(call.principal, params, signal),
      ),
    );
  }

  /** `completion/complete`, priced and metered as `completion:<prompt or template>`. */
  complete(call: AgentCall, params: CompleteRequest['params']): Promise<CompleteResult> {
    return this.dispatch(call, (signal) => this.items.complete(call.principal, params, signal));
  }

  /**
   * `resources/subscribe`, priced and metered as `subscription:<uri>`. Updates go to `subscriber`:
   * the call's session, or a 2026-07-28 agent's listen stream (its resource subscriptions).
   */
  subscribe(
    call: AgentCall,
    params: SubscribeRequest['params'],
    subscriber: string | null = call.session?.id ?? null,
  ): Promise<Record<string, never>> {
    return this.dispatch(call, (signal) => this.items.subscribe(call.principal, subscriber, params, signal));
  }

  /** `resources/unsubscribe`, for the call's session or the listen stream `subscriber`. */
  unsubscribe(
    call: AgentCall,
    params: UnsubscribeRequest['params'],
    subscriber: string | null = call.session?.id ?? null,
  ): Promise<Record<string, never>> {
    return this.dispatch(call, (signal) => this.items.unsubscribe(call.principal, subscriber, params, signal));
  }

  /**
   * A task's poll or steer (tasks extension `tasks/get`, `tasks/update`, `tasks/cancel`; 2025-11-25
   * `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`): free and ungoverned (the task was
   * governed at creation), but a request like the others, so a `tasks/result` waiting for its task
   * ends when the agent cancels it from any edge, and is seen in flight while it waits.
   */
  answerTask(
    call: AgentCall,
    method: string,
    params: Record<string, unknown>,
    clientCapabilities: Record<string, unknown>,
  ): Promise<TaskAnswer> {
    return this.dispatch(call, () => this.tasks.answer(call.principal, method, params, clientCapabilities));
  }

  /** The same for a 2025-11-25 agent, in that revision's shapes (TaskRelay.answerSession, listSession). */
  answerSessionTask(call: AgentCall, method: string, params: Record<string, unknown>): Promise<TaskAnswer> {
    return this.dispatch(call, (signal) =>
      method === 'tasks/list'
        ? this.tasks.listSession(call.principal, params.cursor as string | undefined)
        : this.tasks.answerSession(call.principal, method, params, signal),
    );
  }

  /** The agent's `notifications/cancelled` for `requestId`: aborts it here, or on the edge that runs it. */
  cancel(
    principal: Principal,
    sessionId: string | undefined,
    requestId: RequestId,
    reason: string | undefined,
  ): Promise<void> {
    return this.inFlight.cancel(principal, sessionId, requestId, reason);
  }

  private async dispatch<T>(call: AgentCall, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = call.abort ?? new AbortController();
    const ended = call.abort ? undefined : call.ended;
    // Only a transport's signal needs a listener tying it to the call's controller (no closure for the lean path's).
    const onEnded = ended ? () => abort.abort(ended.reason) : null;
    if (ended && onEnded) {
      if (ended.aborted) onEnded();
      else ended.addEventListener('abort', onEnded, { once: true });
    }
    const untrack = this.inFlight.track(call.principal, call.session?.id, call.requestId, abort);
    try {
      const relay = call.relay?.(abort.signal);
      return await (relay ? runWithCallRelay(relay, () => run(abort.signal)) : run(abort.signal));
    } finally {
      untrack();
      if (ended && onEnded) ended.removeEventListener('abort', onEnded);
    }
  }
}
