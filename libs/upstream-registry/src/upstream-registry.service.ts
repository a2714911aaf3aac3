import { Inject, Injectable } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService, UpstreamServer } from '@tollgate/db';
import { sha256Hex, stableStringify } from '@tollgate/kernel';
import { SecretBox } from '@tollgate/secret-box';
import { UpstreamSecrets, UpstreamSpec, openUpstreamSecrets, sealUpstreamSecrets } from '@tollgate/mcp-client';
import { randomUUID } from 'node:crypto';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';
import { exposedNames } from './catalog-exposure';

/** The gateway's own meta-tools live here (`tollgate__search_tools`, ...). */
export const RESERVED_NAMESPACE = 'tollgate';

export interface RegisterUpstreamInput {
  namespace: string;
  displayName?: string;
  transport: 'STDIO' | 'STREAMABLE_HTTP' | 'SSE';
  command?: string;
  args?: string[];
  url?: string;
  /** Header values sent upstream; stored encrypted (only their names stay readable). */
  headers?: Record<string, string>;
  /** Static secret auth: sent as `Authorization: Bearer <value>`, stored encrypted. */
  bearerToken?: string;
  /** Default: STATIC_SECRET when headers or a bearer token are given, else NONE. */
  authMode?: 'NONE' | 'STATIC_SECRET' | 'PER_USER_OAUTH';
  /** PER_USER_OAUTH: a configured client (else one is registered dynamically) and the scope to ask for. */
  oauth?: { clientId?: string; clientSecret?: string; scope?: string };
  syncIntervalSeconds?: number;
  callTimeoutMs?: number;
  outputTokenCap?: number | null;
}

/** Readable settings of an upstream; secret values live encrypted in `secretsEnc`. */
export interface UpstreamSettings {
  /** Names of the headers kept in `secretsEnc`. */
  headerNames?: string[];
  /** Before secrets were encrypted, headers were kept here in plain text; still honoured. */
  headers?: Record<string, string>;
  env?: Record<string, string>;
  oauth?: { clientId?: string; scope?: string };
}

/** The upstream MCP servers of each organisation. */
@Injectable()
export class UpstreamRegistry {
  private readonly secrets: SecretBox;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.secrets = new SecretBox(config.security.encryptionKeys);
  }

  /** How to connect to an upstream row, its secrets decrypted. */
  specOf(row: UpstreamServer): UpstreamSpec {
    return upstreamSpecOf(row, this.secrets);
  }

  /** Creates the upstream's row with `db` (the caller's transaction, so its audit row joins it). */
  async registerUpstream(
    orgId: string,
    input: RegisterUpstreamInput,
    db: Prisma.TransactionClient,
  ): Promise<UpstreamServer> {
    if (input.namespace === RESERVED_NAMESPACE) {
      throw new CatalogException(
        CatalogExceptionCode.InvalidUpstream,
        `namespace "${RESERVED_NAMESPACE}" is reserved for the gateway's own tools`,
        'namespace',
      );
    }
    if (input.transport === 'STDIO' && !input.command) {
      throw new CatalogException(CatalogExceptionCode.InvalidUpstream, 'a stdio upstream needs a command', 'command');
    }
    if (input.transport !== 'STDIO' && !input.url) {
      throw new CatalogException(
        CatalogExceptionCode.InvalidUpstream,
        `a ${input.transport.toLowerCase()} upstream needs a url`,
        'url',
      );
    }
    const authMode =
      input.authMode ?? (input.bearerToken || Object.keys(input.headers ?? {}).length > 0 ? 'STATIC_SECRET' : 'NONE');
    if (authMode === 'PER_USER_OAUTH' && input.transport === 'STDIO') {
      throw new CatalogException(
        CatalogExceptionCode.InvalidUpstream,
        'per-user OAuth needs an HTTP upstream (STREAMABLE_HTTP or SSE)',
        'authMode',
      );
    }
    if (authMode === 'STATIC_SECRET' && !input.bearerToken && Object.keys(input.headers ?? {}).length === 0) {
      throw new CatalogException(
        CatalogExceptionCode.InvalidUpstream,
        'STATIC_SECRET needs a bearerToken or headers',
        'bearerToken',
      );
    }
    const id = randomUUID();
    const headers: Record<string, string> = {
      ...(input.headers ?? {}),
      ...(input.bearerToken ? { Authorization: `Bearer ${input.bearerToken}` } : {}),
    };
    const secrets: UpstreamSecrets = {
      headers,
      ...(input.oauth?.clientSecret ? { oauthClientSecret: input.oauth.clientSecret } : {}),
    };
    const settings: UpstreamSettings = {
      headerNames: Object.keys(headers).sort(),
      ...(input.oauth?.clientId || input.oauth?.scope
        ? { oauth: { clientId: input.oauth.clientId, scope: input.oauth.scope } }
        : {}),
    };
    try {
      return await db.upstreamServer.create({
        data: {
          id,
          orgId,
          namespace: input.namespace,
          displayName: input.displayName,
          transport: input.transport,
          command: input.transport === 'STDIO' ? input.command : null,
          args: input.transport === 'STDIO' ? (input.args ?? []) : [],
          url: input.transport === 'STDIO' ? null : input.url,
          settings: settings as Prisma.InputJsonObject,
          secretsEnc: sealUpstreamSecrets(this.secrets, id, secrets),
          authMode,
          syncIntervalSeconds: input.syncIntervalSeconds ?? 3600,
          callTimeoutMs: input.callTimeoutMs ?? 30_000,
          outputTokenCap: input.outputTokenCap ?? null,
        },
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw new CatalogException(
          CatalogExceptionCode.NamespaceTaken,
          `namespace "${input.namespace}" is already used in this organization`,
          'namespace',
        );
      }
      throw err;
    }
  }

  listUpstreams(orgId: string) {
    return this.prisma.upstreamServer.findMany({ where: { orgId, deletedAt: null }, orderBy: { createdAt: 'asc' } });
  }

  getUpstream(orgId: string, upstreamId: string): Promise<UpstreamServer> {
    return this.upstreamIn(this.prisma, orgId, upstreamId);
  }

  private async upstreamIn(db: Prisma.TransactionClient, orgId: string, upstreamId: string): Promise<UpstreamServer> {
    // A deleted upstream is gone for the admin API and the worker; reports still read its row.
    const row = await db.upstreamServer.findFirst({ where: { orgId, id: upstreamId, deletedAt: null } });
    if (!row)
      throw new CatalogException(
        CatalogExceptionCode.UpstreamNotFound,
        `upstream ${upstreamId} not found`,
        'upstreamId',
      );
    return row;
  }

  /**
   * Exposes an upstream's tools and prompts under their own names (or back under `<namespace>__`).
   * Refused when one of its names is already exposed by another enabled upstream (a tool or prompt
   * of an unprefixed upstream, or a prefixed name such as `github__search`): no name may route to two.
   */
  async setExposeUnprefixed(
    orgId: string,
    upstreamId: string,
    exposeUnprefixed: boolean,
    db: Prisma.TransactionClient,
  ): Promise<UpstreamServer> {
    const upstream = await this.upstreamIn(db, orgId, upstreamId);
    if (exposeUnprefixed) {
      // Read in the change's transaction, so the check and the write see the same catalog.
      const upstreams = await db.upstreamServer.findMany({ where: { orgId, enabled: true } });
      const byId = new Map(
        upstreams.map((u) => [u.id, { ...u, exposeUnprefixed: u.id === upstream.id ? true : u.exposeUnprefixed }]),
      );
      byId.set(upstream.id, { ...upstream, exposeUnprefixed: true });
      const ids = [...byId.keys()];
      const tools = await db.tool.findMany({
        where: { orgId, removedAt: null, upstreamId: { in: ids } },
        select: { upstreamId: true, name: true },
      });
      const prompts = await db.catalogEntry.findMany({
        where: { orgId, removedAt: null, kind: 'PROMPT', upstreamId: { in: ids } },
        select: { upstreamId: true, key: true },
      });
      const colliding = [
        ...exposedNames(
          tools.map((t) => ({
            namespace: byId.get(t.upstreamId)!.namespace,
            name: t.name,
            unprefixed: byId.get(t.upstreamId)!.exposeUnprefixed,
          })),
        ).collisions.map((n) => `tool ${n}`),
        ...exposedNames(
          prompts.map((p) => ({
            namespace: byId.get(p.upstreamId)!.namespace,
            name: p.key,
            unprefixed: byId.get(p.upstreamId)!.exposeUnprefixed,
          })),
        ).collisions.map((n) => `prompt ${n}`),
      ];
      if (colliding.length > 0) {
        const shown =
          colliding.slice(0, 20).join(', ') + (colliding.length > 20 ? ` and ${colliding.length - 20} more` : '');
        throw new CatalogException(
          CatalogExceptionCode.NameCollision,
          `upstream "${upstream.namespace}" cannot be exposed unprefixed: these names are exposed by another upstream too: ${shown}`,
          'exposeUnprefixed',
        );
      }
    }
    return db.upstreamServer.update({ where: { id: upstream.id }, data: { exposeUnprefixed } });
  }

  /** Every enabled upstream whose sync is not paused, for the worker's schedules. */
  listAllEnabled() {
    return this.prisma.upstreamServer.findMany({ where: { enabled: true, syncPaused: false, deletedAt: null } });
  }
}

/** How to connect to an upstream row; `secrets` opens its encrypted headers. */
export function upstreamSpecOf(row: UpstreamServer, secrets: SecretBox): UpstreamSpec {
  const settings = (row.settings ?? {}) as UpstreamSettings;
  return {
    id: row.id,
    orgId: row.orgId,
    namespace: row.namespace,
    transport: row.transport,
    command: row.command,
    args: row.args,
    url: row.url,
    headers: { ...(settings.headers ?? {}), ...(openUpstreamSecrets(secrets, row).headers ?? {}) },
    env: settings.env ?? {},
    callTimeoutMs: row.callTimeoutMs,
    authMode: row.authMode,
    revision: row.protocolRevision,
    // A newly negotiated revision replaces pooled connections too.
    version: sha256Hex(
      stableStringify([
        row.transport,
        row.command,
        row.args,
        row.url,
        row.settings,
        row.secretsEnc,
        row.callTimeoutMs,
        row.protocolRevision,
      ]),
    ),
  };
}
