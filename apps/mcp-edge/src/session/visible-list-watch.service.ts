import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Principal } from '@tollgate/identity';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { UpstreamClientPool } from '@tollgate/mcp-client';
import { ToolDisclosure } from '../disclosure/tool-disclosure.service';
import { CatalogRelayHandlers } from '../dispatch/catalog-relay.handlers';
import { LIST_KINDS, ListKind } from './list-changed';
import { McpSessionStore } from './mcp-session.store';
import { SessionHub } from './session-hub.service';

type Fingerprint = Record<ListKind, string>;

interface Watcher {
  principal: Principal;
  sessionId: string | null;
  announce: (kinds: ListKind[]) => void;
  /** A digest of each list as the client last could see it; null while not known. */
  seen: Fingerprint | null;
  /** The baseline being taken: only the latest may set `seen`. */
  baseline: object | null;
}

/**
 * Tells a client that its tools, resources or prompts changed only when the list it can see did.
 * An org's catalog, policy, price, budget or rate-limit change (`org-config-changed`) used to send
 * all three list_changed notifications to every session of the org: a budget change, or a policy
 * change for one key, made every agent of the org list everything again. Each open notification
 * stream (a session's GET stream, a 2026-07-28 `subscriptions/listen`) is watched here with a
 * digest of the lists its key (and session) sees; on a change of its org the lists are built
 * again and only those whose digest moved are announced. The work is per stream this edge holds,
 * one org change at a time, in order.
 *
 * When in doubt it announces: a stream whose first digest was not yet taken when a change came in
 * (or was taken across one), and lists that could not be built, count as changed (a needless
 * notification rather than a missed one).
 */
@Injectable()
export class VisibleListWatch implements OnModuleInit {
  private readonly logger = new Logger(VisibleListWatch.name);
  private readonly byOrg = new Map<string, Set<Watcher>>();
  private readonly bySession = new Map<string, Set<Watcher>>();
  // Per org: how many changes came in (to tell a digest taken across one), and the recheck running.
  private readonly generations = new Map<string, number>();
  private readonly rechecks = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisService,
    private readonly hub: SessionHub,
    private readonly disclosure: ToolDisclosure,
    private readonly catalogRelay: CatalogRelayHandlers,
    private readonly sessions: McpSessionStore,
    private readonly pool: UpstreamClientPool,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(ORG_CONFIG_CHANGED_CHANNEL, (orgId) => this.orgChanged(orgId));
    // A session that loaded tools was told so (SessionHub): what it sees now is the new baseline.
    this.hub.onSessionToolListChanged((sessionId) => {
      for (const watcher of this.bySession.get(sessionId) ?? []) this.takeBaseline(watcher);
    });
    // An upstream announcing that its lists changed: the sync it queues changes the catalog only
    // later (and the recheck then compares again), so its org's streams are told at once, as a doubt.
    this.pool.onToolListChanged((spec) => this.upstreamAnnounced(spec.orgId));
  }

  /**
   * Watches what `principal` (in session `sessionId`, if any) sees; `announce` gets the lists that
   * changed. Returns the function that stops watching (call it when the stream closes).
   */
  watch(principal: Principal, sessionId: string | null, announce: (kinds: ListKind[]) => void): () => void {
    const watcher: Watcher = { principal, sessionId, announce, seen: null, baseline: null };
    addTo(this.byOrg, principal.orgId, watcher);
    if (sessionId) addTo(this.bySession, sessionId, watcher);
    this.takeBaseline(watcher);
    return () => {
      removeFrom(this.byOrg, principal.orgId, watcher);
      if (sessionId) removeFrom(this.bySession, sessionId, watcher);
      if (!this.byOrg.has(principal.orgId)) this.generations.delete(principal.orgId);
    };
  }

  /** The lists as the client sees them now, unless a change of its org comes in meanwhile. */
  private takeBaseline(watcher: Watcher): void {
    const orgId = watcher.principal.orgId;
    const generation = this.generations.get(orgId) ?? 0;
    const baseline = {};
    watcher.seen = null;
    watcher.baseline = baseline;
    this.fingerprint(watcher).then(
      (now) => {
        if (watcher.baseline === baseline && (this.generations.get(orgId) ?? 0) === generation) watcher.seen = now;
      },
      (err: Error) => this.logger.warn(`could not read the lists a stream sees: ${err.message}`),
    );
  }

  private upstreamAnnounced(orgId: string): void {
    for (const watcher of this.byOrg.get(orgId) ?? []) {
      watcher.announce(LIST_KINDS);
      this.takeBaseline(watcher);
    }
  }

  private orgChanged(orgId: string): void {
    if (!this.byOrg.has(orgId)) return;
    this.generations.set(orgId, (this.generations.get(orgId) ?? 0) + 1);
    // The org's cached catalog, policies and prices are dropped by their own handlers of this same
    // message, called in this same loop; a promise callback runs after them, so the lists are
    // built from the changed configuration.
    const recheck = (this.rechecks.get(orgId) ?? Promise.resolve()).then(() => this.recheck(orgId));
    this.rechecks.set(orgId, recheck);
    void recheck.finally(() => {
      if (this.rechecks.get(orgId) === recheck) this.rechecks.delete(orgId);
    });
  }

  private async recheck(orgId: string): Promise<void> {
    for (const watcher of [...(this.byOrg.get(orgId) ?? [])]) {
      let now: Fingerprint | null = null;
      try {
        now = await this.fingerprint(watcher);
      } catch (err) {
        this.logger.warn(`could not read the lists a stream sees: ${(err as Error).message}`);
      }
      // Its stream closed meanwhile.
      if (!this.byOrg.get(orgId)?.has(watcher)) continue;
      const changed = LIST_KINDS.filter((k) => !watcher.seen || !now || watcher.seen[k] !== now[k]);
      // The client now knows of everything up to `now` (announced where it differed): each later
      // change has its own recheck after this one, which compares with it. A baseline still being
      // taken would be older.
      watcher.baseline = null;
      if (now) watcher.seen = now;
      if (changed.length > 0) watcher.announce(changed);
    }
  }

  /** A digest of each list the watcher's client would be answered now. */
  private async fingerprint(watcher: Watcher): Promise<Fingerprint> {
    const { principal } = watcher;
    // The session's own state (the tools it loaded) is in Redis: read as it is now.
    const session = watcher.sessionId ? await this.sessions.getSession(principal, watcher.sessionId) : null;
    const [tools, resources, templates, prompts] = await Promise.all([
      this.disclosure.listTools(principal, session),
      this.catalogRelay.listResources(principal),
      this.catalogRelay.listResourceTemplates(principal),
      this.catalogRelay.listPrompts(principal),
    ]);
    return {
      tools: digest(tools.tools),
      resources: digest([resources.resources, templates.resourceTemplates]),
      prompts: digest(prompts.prompts),
    };
  }
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64');
}

function addTo(map: Map<string, Set<Watcher>>, key: string, watcher: Watcher): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(watcher);
}

function removeFrom(map: Map<string, Set<Watcher>>, key: string, watcher: Watcher): void {
  const set = map.get(key);
  set?.delete(watcher);
  if (set?.size === 0) map.delete(key);
}
