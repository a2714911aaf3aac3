import { Inject, Injectable } from '@nestjs/common';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  CompleteResultSchema,
  EmptyResultSchema,
  ErrorCode,
  GetPromptRequest,
  GetPromptResult,
  GetPromptResultSchema,
  ListPromptsResult,
  ListResourceTemplatesResult,
  ListResourcesResult,
  McpError,
  Prompt,
  ReadResourceRequest,
  Resource,
  ResourceTemplate,
  ReadResourceResult,
  ReadResourceResultSchema,
  SubscribeRequest,
  UnsubscribeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { OrgCatalog, ServedEntry, ToolCatalogService, parseNamespacedUri } from '@tollgate/upstream-registry';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal } from '@tollgate/identity';
import { normalizeResourceUri } from '@tollgate/policy';
import { countJsonTokens } from '@tollgate/tokens';
import { UpstreamClientPool, UpstreamSpec, speaksStatelessRevision } from '@tollgate/mcp-client';
import { EmbeddedResources } from '../governed-call/embedded-resources.service';
import { GovernedItem, GovernedItemPipeline } from '../governed-call/governed-item.pipeline';
import { UpstreamOutcome } from '../governed-call/upstream-caller.service';
import { ResourceSubscriptions } from '../session/resource-subscriptions.service';

/** The MCP `resource not found` error (spec: -32002). */
const RESOURCE_NOT_FOUND = -32002;

interface ResolvedResource {
  spec: UpstreamSpec;
  /** The URI at the upstream. */
  key: string;
}

/**
 * Resources, prompts and completions through the edge's MCP server: lists show what the caller's
 * policies allow (names and URIs mapped to what agents see), reads and gets are governed by
 * GovernedItemPipeline, and so are resource subscriptions and completions (priced and metered as
 * `subscription:<uri>` and `completion:<prompt or template>`), relayed to the upstream that owns the item.
 */
@Injectable()
export class CatalogRelayHandlers {
  constructor(
    private readonly catalog: ToolCatalogService,
    private readonly items: GovernedItemPipeline,
    private readonly subscriptions: ResourceSubscriptions,
    private readonly embeddedResources: EmbeddedResources,
    private readonly pool: UpstreamClientPool,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  // One method per MCP method: the server factory registers the lists, CallDispatcher runs the rest.

  async listResources(principal: Principal): Promise<ListResourcesResult> {
    const { entries } = await this.visible(principal, 'resources');
    return { resources: entries.map((r) => ({ ...r.definition, uri: r.exposed }) as Resource) };
  }

  async listResourceTemplates(principal: Principal): Promise<ListResourceTemplatesResult> {
    const { entries } = await this.visible(principal, 'resourceTemplates');
    return { resourceTemplates: entries.map((t) => ({ ...t.definition, uriTemplate: t.exposed }) as ResourceTemplate) };
  }

  async listPrompts(principal: Principal): Promise<ListPromptsResult> {
    const { entries } = await this.visible(principal, 'prompts');
    return { prompts: entries.map((p) => ({ ...p.definition, name: p.exposed }) as Prompt) };
  }

  async readResource(
    principal: Principal,
    params: ReadResourceRequest['params'],
    signal?: AbortSignal,
  ): Promise<ReadResourceResult> {
    const uri = params.uri;
    const catalog = await this.catalog.catalogFor(principal.orgId);
    const { spec, key } = this.resolveResource(catalog, uri);
    return this.items.run<ReadResourceResult>(
      principal,
      { kind: 'resource', spec, key, exposed: uri, outputTokenCap: catalog.outputTokenCaps.get(spec.id) ?? null },
      (upstreams) =>
        upstreams.request(
          principal,
          spec,
          { method: 'resources/read', params: { ...params, uri: key } },
          ReadResourceResultSchema,
          signal,
        ),
      (result) => {
        // Contents come back under the URI the agent asked for.
        const mapped = { ...result, contents: result.contents.map((c) => (c.uri === key ? { ...c, uri } : c)) };
        const only = mapped.contents.length === 1 ? mapped.contents[0] : undefined;
        return {
          result: mapped,
          pageableText: only && 'text' in only ? only.text : null,
          tokens: countJsonTokens(mapped.contents, this.config.tokens.encoding),
        };
      },
      (result, page) => ({
        ...result,
        contents: [{ ...result.contents[0], text: pageText(page) }],
        _meta: { ...(result._meta ?? {}), ...(page._meta ?? {}) },
      }),
    );
  }

  /** Subscribes `subscriber` (a session, or a 2026-07-28 listen stream) to the resource's updates. */
  async subscribe(
    principal: Principal,
    subscriber: string | null,
    params: SubscribeRequest['params'],
    signal?: AbortSignal,
  ): Promise<Record<string, never>> {
    const uri = params.uri;
    const catalog = await this.catalog.catalogFor(principal.orgId);
    const { spec, key } = this.resolveResource(catalog, uri);
    // Governed like a read (resource policy, `subscription:<uri>` price rules, budgets, one usage event).
    const answer = await this.items.run<Record<string, never>>(
      principal,
      {
        kind: 'resource',
        meteredAs: 'subscription',
        spec,
        key,
        exposed: uri,
        outputTokenCap: catalog.outputTokenCaps.get(spec.id) ?? null,
      },
      async (upstreams) => {
        // 2026-07-28 has no resources/subscribe: the edge's listen stream to the upstream asks for
        // the resource's updates instead.
        if (speaksStatelessRevision(spec)) {
          await this.pool.watchResource(spec, key, true);
          return { ok: true, result: {} };
        }
        return upstreams.request(
          principal,
          spec,
          { method: 'resources/subscribe', params: { ...params, uri: key } },
          EmptyResultSchema,
          signal,
        ) as Promise<UpstreamOutcome<Record<string, never>>>;
      },
      (result) => ({ result, pageableText: null, tokens: 0 }),
      (result) => result,
    );
    // Without a subscriber there is no stream to tell of updates: the upstream still accepted it.
    if (subscriber) await this.subscriptions.subscribe(principal.orgId, subscriber, spec.id, key, uri);
    return answer;
  }

  async unsubscribe(
    principal: Principal,
    subscriber: string | null,
    params: UnsubscribeRequest['params'],
    signal?: AbortSignal,
  ): Promise<Record<string, never>> {
    const uri = params.uri;
    const { spec, key } = this.resolveResource(await this.catalog.catalogFor(principal.orgId), uri);
    // The upstream keeps the subscription while another subscriber of the org still wants its updates.
    const remaining = subscriber
      ? await this.subscriptions.unsubscribe(principal.orgId, subscriber, spec.id, key, uri)
      : 0;
    if (remaining === 0 && speaksStatelessRevision(spec)) await this.pool.watchResource(spec, key, false);
    else if (remaining === 0)
      await this.relay(principal, spec, { method: 'resources/unsubscribe', params: { ...params, uri: key } }, signal);
    return {};
  }

  async getPrompt(
    principal: Principal,
    params: GetPromptRequest['params'],
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    const name = params.name;
    const catalog = await this.catalog.catalogFor(principal.orgId);
    const prompt = catalog.promptsByExposedName.get(name);
    if (!prompt)
      throw new McpError(ErrorCode.InvalidParams, `No prompt named "${name}" is available; list prompts to see them.`);
    const spec = this.specOf(catalog, prompt.upstreamId);
    return this.items.run<GetPromptResult>(
      principal,
      {
        kind: 'prompt',
        spec,
        key: prompt.key,
        exposed: name,
        outputTokenCap: catalog.outputTokenCaps.get(spec.id) ?? null,
      },
      async (upstreams) => {
        const outcome = await upstreams.request(
          principal,
          spec,
          { method: 'prompts/get', params: { ...params, name: prompt.key } },
          GetPromptResultSchema,
          signal,
        );
        if (!outcome.ok) return outcome;
        // Resources embedded or linked in the messages are decided by the resource policy, like a read.
        const contents = await this.embeddedResources.withholdDenied(
          principal,
          spec.namespace,
          outcome.result.messages.map((m) => m.content),
        );
        const messages = outcome.result.messages.map((m, i) =>
          contents[i] === m.content ? m : { ...m, content: contents[i] },
        );
        return { ...outcome, result: { ...outcome.result, messages } };
      },
      (result) => ({
        result,
        pageableText: null,
        tokens: countJsonTokens(result.messages, this.config.tokens.encoding),
      }),
      (result) => result,
    );
  }

  async complete(
    principal: Principal,
    params: CompleteRequest['params'],
    signal?: AbortSignal,
  ): Promise<CompleteResult> {
    const catalog = await this.catalog.catalogFor(principal.orgId);
    const ref = params.ref;
    let item: GovernedItem;
    let upstreamRef: CompleteRequest['params']['ref'];
    if (ref.type === 'ref/prompt') {
      const prompt = catalog.promptsByExposedName.get(ref.name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `No prompt named "${ref.name}" is available.`);
      const spec = this.specOf(catalog, prompt.upstreamId);
      item = { kind: 'prompt', spec, key: prompt.key, exposed: ref.name, outputTokenCap: null };
      upstreamRef = { ...ref, name: prompt.key };
    } else {
      const template = this.resolveTemplate(catalog, ref.uri);
      item = { kind: 'resource', spec: template.spec, key: template.key, exposed: ref.uri, outputTokenCap: null };
      upstreamRef = { ...ref, uri: template.key };
    }
    // Governed like a get (the prompt's or template's policy, `completion:<key>` price rules,
    // budgets, one usage event), its suggestions counted as output tokens.
    item.outputTokenCap = catalog.outputTokenCaps.get(item.spec.id) ?? null;
    return this.items.run<CompleteResult>(
      principal,
      { ...item, meteredAs: 'completion' },
      (upstreams) =>
        upstreams.request(
          principal,
          item.spec,
          { method: 'completion/complete', params: { ...params, ref: upstreamRef } },
          CompleteResultSchema,
          signal,
        ),
      (result) => ({
        result,
        pageableText: null,
        tokens: countJsonTokens(result.completion, this.config.tokens.encoding),
      }),
      (result) => result,
    );
  }

  /** The catalog's entries of one kind that the caller's policies allow. */
  private async visible(
    principal: Principal,
    kind: 'resources' | 'resourceTemplates' | 'prompts',
  ): Promise<{ entries: ServedEntry[] }> {
    const catalog = await this.catalog.catalogFor(principal.orgId);
    const policyKind = kind === 'prompts' ? 'prompt' : 'resource';
    const entries: ServedEntry[] = [];
    for (const e of catalog[kind])
      if (await this.items.allowed(principal, policyKind, e.namespace, e.key)) entries.push(e);
    return { entries };
  }

  /**
   * The upstream of a URI: a listed resource (its exposed URI), `tollgate://<namespace>/<uri>`,
   * or the one upstream whose resource template matches it.
   */
  private resolveResource(catalog: OrgCatalog, uri: string): ResolvedResource {
    const listed = catalog.resourcesByUri.get(uri);
    if (listed) return { spec: this.specOf(catalog, listed.upstreamId), key: listed.key };
    // Anything else is decided, matched and sent to the upstream in its normalised form: what the
    // policy allowed is what the upstream reads (it resolves `..` and percent-encoding itself).
    const pinned = parseNamespacedUri(uri);
    if (pinned) {
      const spec = catalog.upstreamsByNamespace.get(pinned.namespace);
      if (spec) return { spec, key: decidableUri(pinned.uri) };
    }
    const key = decidableUri(uri);
    const owners = new Set(
      catalog.resourceTemplates.filter((t) => matchesTemplate(t.key, key)).map((t) => t.upstreamId),
    );
    if (owners.size === 1) return { spec: this.specOf(catalog, [...owners][0]), key };
    if (owners.size > 1) {
      const namespaces = catalog.resourceTemplates.filter((t) => owners.has(t.upstreamId)).map((t) => t.namespace);
      throw new McpError(
        ErrorCode.InvalidParams,
        `Resource ${uri} matches templates of several servers (${[...new Set(namespaces)].join(', ')}): read it as tollgate://<server>/${uri}`,
      );
    }
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
  }

  private resolveTemplate(catalog: OrgCatalog, uriTemplate: string): ResolvedResource & { namespace: string } {
    const exposed = catalog.resourceTemplates.find((t) => t.exposed === uriTemplate);
    if (exposed)
      return { spec: this.specOf(catalog, exposed.upstreamId), key: exposed.key, namespace: exposed.namespace };
    throw new McpError(
      ErrorCode.InvalidParams,
      `No resource template ${uriTemplate} is available; list resource templates to see them.`,
    );
  }

  private specOf(catalog: OrgCatalog, upstreamId: string): UpstreamSpec {
    const spec = catalog.upstreams.get(upstreamId);
    if (!spec) throw new Error(`catalog inconsistency: upstream ${upstreamId} missing`);
    return spec;
  }

  /** An ungoverned relay (subscriptions, completions): policy checked by the caller, nothing metered. */
  private async relay<T = Record<string, never>>(
    principal: Principal,
    spec: UpstreamSpec,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal | undefined,
    schema: typeof CompleteResultSchema | typeof EmptyResultSchema = EmptyResultSchema,
  ): Promise<T> {
    const outcome = await this.items.relay(principal, spec, request, schema, signal);
    return outcome as T;
  }
}

/** The normalised URI the policy decides on; one whose meaning depends on the upstream's decoding is refused. */
function decidableUri(uri: string): string {
  const normalized = normalizeResourceUri(uri);
  if (normalized.ok) return normalized.uri;
  throw new McpError(
    ErrorCode.InvalidParams,
    `Resource URI ${uri} cannot be decided by the resource policy: ${normalized.reason}. Send it without that encoding.`,
    { uri },
  );
}

function matchesTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

/** The page's text and the note that says how to read on. */
function pageText(page: CallToolResult): string {
  return page.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n\n');
}
