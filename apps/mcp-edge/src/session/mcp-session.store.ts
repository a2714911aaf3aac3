import { Injectable } from '@nestjs/common';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';
import { randomUUID } from 'node:crypto';

/** An agent's MCP session: which key opened it and the tools it loaded (their schemas fetched). */
export interface McpSession {
  id: string;
  orgId: string;
  keyId: string;
  loadedTools: string[];
  schemaTokens: number;
  /** The client said at initialize that it can open a URL for its user (URL elicitation). */
  elicitationUrl: boolean;
  /** It can answer form elicitation, sampling and roots requests (relayed from upstreams during a call). */
  elicitationForm: boolean;
  sampling: boolean;
  roots: boolean;
  /** The level it asked for with `logging/setLevel`; upstream log messages below it are not relayed. */
  logLevel?: LoggingLevel;
}

/** What a client declared at initialize that the edge relays requests for. */
export interface SessionClient {
  elicitationUrl: boolean;
  elicitationForm: boolean;
  sampling: boolean;
  roots: boolean;
}

/** The relayed capabilities an `initialize` request declares. */
export function sessionClientOf(initialize: unknown): SessionClient {
  const caps = (initialize as { params?: { capabilities?: Record<string, unknown> } }).params?.capabilities ?? {};
  const elicitation = caps.elicitation as { form?: unknown; url?: unknown } | undefined;
  return {
    elicitationUrl: elicitation?.url !== undefined,
    // An empty elicitation capability means form mode (the revision before modes existed).
    elicitationForm: elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined),
    sampling: caps.sampling !== undefined,
    roots: caps.roots !== undefined,
  };
}

/** Idle sessions are forgotten after a day. */
const SESSION_TTL_SECONDS = 24 * 3600;

/**
 * Sessions live in Redis, not in the edge, so a POST of any session can land on any replica; the
 * session id is only good with the key that opened it.
 */
@Injectable()
export class McpSessionStore {
  constructor(private readonly redis: RedisService) {}

  private key(orgId: string, id: string): string {
    return this.redis.orgKey(orgId, 'session', id);
  }

  async createSession(principal: Principal, client: SessionClient): Promise<McpSession> {
    const id = randomUUID();
    const key = this.key(principal.orgId, id);
    const flags = {
      elicitationUrl: client.elicitationUrl ? 1 : 0,
      elicitationForm: client.elicitationForm ? 1 : 0,
      sampling: client.sampling ? 1 : 0,
      roots: client.roots ? 1 : 0,
    };
    await this.redis.client
      .multi()
      .hset(key, { keyId: principal.keyId, schemaTokens: 0, ...flags })
      .expire(key, SESSION_TTL_SECONDS)
      .exec();
    return { id, orgId: principal.orgId, keyId: principal.keyId, loadedTools: [], schemaTokens: 0, ...client };
  }

  /** Remembers the session's `logging/setLevel`. */
  async setLogLevel(session: McpSession, level: LoggingLevel): Promise<void> {
    await this.redis.client.hset(this.key(session.orgId, session.id), 'logLevel', level);
    session.logLevel = level;
  }

  /** The session, if it exists and belongs to this key; its idle timer starts again. */
  async getSession(principal: Principal, id: string): Promise<McpSession | null> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return null;
    const key = this.key(principal.orgId, id);
    // One round trip: read, and restart the idle timer (a no-op for a missing key).
    const [[, fields], [, tools]] = (await this.redis.client
      .multi()
      .hgetall(key)
      .smembers(`${key}:tools`)
      .expire(key, SESSION_TTL_SECONDS)
      .expire(`${key}:tools`, SESSION_TTL_SECONDS)
      .exec()) as [[null, Record<string, string>], [null, string[]]];
    if (fields.keyId !== principal.keyId) return null;
    return {
      id,
      orgId: principal.orgId,
      keyId: principal.keyId,
      loadedTools: tools.sort(),
      schemaTokens: Number(fields.schemaTokens ?? 0),
      elicitationUrl: fields.elicitationUrl === '1',
      elicitationForm: fields.elicitationForm === '1',
      sampling: fields.sampling === '1',
      roots: fields.roots === '1',
      ...(fields.logLevel ? { logLevel: fields.logLevel as LoggingLevel } : {}),
    };
  }

  /** Adds tools to the session's list; returns the names that were not there yet. */
  async loadTools(session: McpSession, tools: { name: string; schemaTokens: number }[]): Promise<string[]> {
    const fresh = tools.filter((t) => !session.loadedTools.includes(t.name));
    if (fresh.length === 0) return [];
    const key = this.key(session.orgId, session.id);
    const tokens = fresh.reduce((sum, t) => sum + t.schemaTokens, 0);
    await this.redis.client
      .multi()
      .sadd(`${key}:tools`, ...fresh.map((t) => t.name))
      .expire(`${key}:tools`, SESSION_TTL_SECONDS)
      .hincrby(key, 'schemaTokens', tokens)
      .exec();
    session.loadedTools = [...session.loadedTools, ...fresh.map((t) => t.name)].sort();
    session.schemaTokens += tokens;
    return fresh.map((t) => t.name);
  }

  async deleteSession(principal: Principal, id: string): Promise<boolean> {
    const session = await this.getSession(principal, id);
    if (!session) return false;
    const key = this.key(principal.orgId, id);
    await this.redis.client.unlink(key, `${key}:tools`);
    return true;
  }
}
