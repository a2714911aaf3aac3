import { Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { META_TOOL_NAMES, READ_RESULT_PAGE_TOOL, isCodeModeToolName } from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { CodeModeService } from '../code-mode/code-mode.service';
import { ToolDisclosure } from '../disclosure/tool-disclosure.service';
import { GovernedCallPipeline } from '../governed-call/governed-call.pipeline';
import { ToolErrorCode, toolErrorResult } from '../governed-call/tool-error';
import { McpSession } from '../session/mcp-session.store';
import { AgentTrail } from '../trail/agent-trail';

/** The meta-tools' names, as a set: every tool call asks whether it is one. */
const META_TOOLS: ReadonlySet<string> = new Set(Object.values(META_TOOL_NAMES));

/**
 * Where an agent's `tools/call` goes, by the name it calls: a page of a paged result
 * (`tollgate__read_result_page`), a code-mode tool, `tollgate__call_tool` or an upstream tool
 * (the governed call), or a discovery tool (search, schemas, categories). Each answer joins the
 * agent's trail.
 */
@Injectable()
export class ToolRouter {
  constructor(
    private readonly pipeline: GovernedCallPipeline,
    private readonly codeMode: CodeModeService,
    private readonly disclosure: ToolDisclosure,
    private readonly trail: AgentTrail,
  ) {}

  /** Answers a `tools/call` and records it in the trail. */
  async callTool(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
    session: McpSession | null = null,
  ): Promise<CallToolResult> {
    const scriptCalls = this.trail.scriptCallsFor(principal, name);
    const result = await (scriptCalls
      ? this.trail.capturingScriptCalls(scriptCalls, () => this.route(principal, name, args, signal, session))
      : this.route(principal, name, args, signal, session));
    this.trail.toolAnswer(principal, session, name, args, result, scriptCalls);
    return result;
  }

  // Not async: it hands on the promise of where the call goes (an async wrapper would add a promise and its turns).
  private route(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    signal: AbortSignal | undefined,
    session: McpSession | null,
  ): Promise<CallToolResult> {
    if (name === READ_RESULT_PAGE_TOOL) return this.pipeline.readResultPage(principal, args);
    if (isCodeModeToolName(name)) return this.codeMode.callTool(principal, name, args, signal);
    if (!META_TOOLS.has(name)) return this.pipeline.callTool(principal, name, args, signal);
    if (name !== META_TOOL_NAMES.callTool) return this.disclosure.answerDiscoveryTool(principal, name, args, session);
    const a = args ?? {};
    if (typeof a.name !== 'string')
      return Promise.resolve(invalidMetaCall(name, 'name must be the tool to call, e.g. "github__create_issue"'));
    const inner = a.arguments;
    if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner)))
      return Promise.resolve(invalidMetaCall(name, 'arguments must be an object'));
    return this.pipeline.callTool(principal, a.name, inner as Record<string, unknown> | undefined, signal);
  }
}

function invalidMetaCall(name: string, message: string): CallToolResult {
  return toolErrorResult({
    code: ToolErrorCode.InvalidRequest,
    message,
    hint: 'Fix the arguments and call again.',
    tool: name,
  });
}
