import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Inject, Injectable } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService, UpstreamServer } from '@tollgate/db';
import { StaleWriteException } from '@tollgate/kernel';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { SecretBox } from '@tollgate/secret-box';
import { UpstreamSecrets, openUpstreamSecrets, sealUpstreamSecrets } from '@tollgate/mcp-client';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';
import { CatalogScheduleService, syncJobIdOf } from './catalog-schedule.service';
import { RegisterUpstreamInput, UpstreamRegistry, UpstreamSettings } from './upstream-registry.service';

/** What an admin may change on a registered upstream; absent fields keep their value. */
export interface UpdateUpstreamInput {
  displayName?: string | null;
  /** HTTP transports only; the caller checks it against the outbound rule first. */
  url?: string;
  /** Headers set (added or replaced by name); their values are sealed like at registration. */
  headers?: Record<string, string>;
  /** Header names dropped. */
  removeHeaders?: string[];
  /** A new static secret (`Authorization: Bearer <value>`); null drops it. */
  bearerToken?: string | null;
  syncIntervalSeconds?: number;
  callTimeoutMs?: number;
  outputTokenCap?: number | null;
  /** Review of new or changed tools: true serves them at once, false holds them; null follows the org. */
  autoApproveTools?: boolean | null;
  /** How calls authenticate upstream; checked against the secrets the upstream will have after this change. */
  authMode?: 'NONE' | 'STATIC_SECRET' | 'PER_USER_OAUTH';
  /**
   * PER_USER_OAUTH's client: a pre-registered client id (null: register one dynamically again), its secret
   * (write-only, sealed; null drops it) and the scope asked for (null: none). A new client id drops the old
   * client's secret unless a new one is given.
   */
  oauth?: { clientId?: string | null; clientSecret?: string | null; scope?: string | null };
}

export interface UpstreamChange {
  upstream: UpstreamServer;
  /** Names of what changed (never values: headers and secrets are write-only). */
  changed: string[];
}

/**
 * Registration and day-2 changes of an upstream: edit (URL, headers and secrets, intervals, review),
 * exposure, disable and enable, pause and resume its sync, and delete. Each day-2 write is conditional
 * on the version the admin read when one is given (412 otherwise) and increments it. Every change
 * tells the edges through `org-config-changed`: their catalogs reload, their pooled client is
 * replaced when the connection settings changed (the spec's version hashes them), and sessions hear
 * list_changed.
 */
@Injectable()
export class UpstreamLifecycleService {
  private readonly secrets: SecretBox;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly registry: UpstreamRegistry,
    private readonly schedule: CatalogScheduleService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.secrets = new SecretBox(config.security.encryptionKeys);
  }

  /**
   * Registers an upstream with its audit row in one transaction, then schedules its periodic sync
   * and queues the first one (the caller vets stdio and URL). The audit names the first sync's job.
   */
  async registerUpstream(
    orgId: string,
    input: RegisterUpstreamInput,
    audit: AuditedBy<{ upstream: UpstreamServer; jobId: string }>,
  ): Promise<{ upstream: UpstreamServer; jobId: string }> {
    const registered = await this.prisma.$transaction(async (tx) => {
      const upstream = await this.registry.registerUpstream(orgId, input, tx);
      const jobId = syncJobIdOf(upstream.id, 'created');
      await recordAudited(tx, audit, { upstream, jobId });
      return { upstream, jobId };
    });
    await this.schedule.scheduleUpstreamSync(registered.upstream);
    await this.schedule.requestSync(orgId, registered.upstream.id, 'created', registered.jobId);
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return registered;
  }

  /** Exposes the upstream's tools and prompts unprefixed (or prefixed again), with its audit row; 409 on a name collision. */
  async setExposure(
    orgId: string,
    upstreamId: string,
    exposeUnprefixed: boolean,
    audit: AuditedBy<UpstreamServer>,
  ): Promise<UpstreamServer> {
    const upstream = await this.prisma.$transaction(async (tx) => {
      const written = await this.registry.setExposeUnprefixed(orgId, upstreamId, exposeUnprefixed, tx);
      await recordAudited(tx, audit, written);
      return written;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return upstream;
  }

  async updateUpstream(
    orgId: string,
    upstreamId: string,
    input: UpdateUpstreamInput,
    audit: AuditedBy<UpstreamChange>,
    expectedVersion?: number,
  ): Promise<UpstreamChange> {
    const current = await this.registry.getUpstream(orgId, upstreamId);
    const data: Prisma.UpstreamServerUpdateManyMutationInput = {};
    const changed: string[] = [];
    if (input.displayName !== undefined) {
      data.displayName = input.displayName;
      changed.push('displayName');
    }
    if (input.url !== undefined) {
      if (current.transport === 'STDIO')
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'a stdio upstream has no url (it runs a command)',
          'url',
        );
      data.url = input.url;
      changed.push('url');
    }
    const touchesSecrets =
      input.headers !== undefined ||
      input.removeHeaders !== undefined ||
      input.bearerToken !== undefined ||
      input.authMode !== undefined ||
      input.oauth !== undefined;
    if (touchesSecrets) {
      if (current.transport === 'STDIO' && input.bearerToken) {
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'a stdio upstream takes no headers or bearer token',
          'bearerToken',
        );
      }
      const opened = openUpstreamSecrets(this.secrets, current);
      const settings = (current.settings ?? {}) as UpstreamSettings;
      // Headers once kept in plain settings are folded into the sealed ones on the first edit.
      const headers: Record<string, string> = { ...(settings.headers ?? {}), ...(opened.headers ?? {}) };
      const removeLower = new Set((input.removeHeaders ?? []).map((h) => h.toLowerCase()));
      for (const name of Object.keys(headers)) if (removeLower.has(name.toLowerCase())) delete headers[name];
      for (const [name, value] of Object.entries(input.headers ?? {})) {
        for (const existing of Object.keys(headers))
          if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
        headers[name] = value;
      }
      if (input.bearerToken !== undefined) {
        for (const existing of Object.keys(headers))
          if (existing.toLowerCase() === 'authorization') delete headers[existing];
        if (input.bearerToken !== null) headers.Authorization = `Bearer ${input.bearerToken}`;
      }
      // The mode asked for, else the current one (NONE turns STATIC_SECRET once a header is set, as at registration).
      const authMode =
        input.authMode ??
        (current.authMode === 'NONE' && Object.keys(headers).length > 0 ? 'STATIC_SECRET' : current.authMode);
      const hasHeaders = Object.keys(headers).length > 0;
      if (authMode === 'STATIC_SECRET' && !hasHeaders) {
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'a STATIC_SECRET upstream needs a bearerToken or at least one header',
          'bearerToken',
        );
      }
      if (authMode === 'NONE' && hasHeaders) {
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'authMode NONE sends no secret: drop the headers and bearer token in the same change (removeHeaders, bearerToken: null)',
          'authMode',
        );
      }
      if (authMode === 'PER_USER_OAUTH' && current.transport === 'STDIO') {
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'per-user OAuth needs an HTTP upstream (STREAMABLE_HTTP or SSE)',
          'authMode',
        );
      }
      if (input.oauth !== undefined && authMode !== 'PER_USER_OAUTH') {
        throw new CatalogException(
          CatalogExceptionCode.InvalidUpstream,
          'oauth settings apply to a PER_USER_OAUTH upstream only (set authMode: PER_USER_OAUTH with them)',
          'oauth',
        );
      }
      const secrets: UpstreamSecrets = { ...opened, headers };
      const rest: UpstreamSettings & { oauth?: Record<string, unknown> } = { ...settings };
      delete rest.headers;
      const oauthChanged: string[] = [];
      if (input.oauth !== undefined) {
        const oauth: Record<string, unknown> = { ...(rest.oauth ?? {}) };
        const { clientId, clientSecret, scope } = input.oauth;
        if (clientId !== undefined && clientId !== oauth.clientId) {
          // Another client (or none: register again): the old client's secret and registration go with it.
          delete oauth.registered;
          delete secrets.oauthClientSecret;
          if (clientId === null) delete oauth.clientId;
          else oauth.clientId = clientId;
          oauthChanged.push('oauth.clientId');
        }
        if (clientSecret !== undefined) {
          if (clientSecret === null) delete secrets.oauthClientSecret;
          else secrets.oauthClientSecret = clientSecret;
          oauthChanged.push('oauth.clientSecret');
        }
        if (scope !== undefined) {
          if (scope === null) delete oauth.scope;
          else oauth.scope = scope;
          oauthChanged.push('oauth.scope');
        }
        rest.oauth = oauth;
      }
      data.settings = { ...rest, headerNames: Object.keys(headers).sort() } as Prisma.InputJsonObject;
      data.secretsEnc = sealUpstreamSecrets(this.secrets, current.id, secrets);
      if (authMode !== current.authMode) {
        data.authMode = authMode;
        if (input.authMode !== undefined) changed.push('authMode');
      }
      changed.push(
        ...(input.headers || input.removeHeaders ? ['headers'] : []),
        ...(input.bearerToken !== undefined ? ['bearerToken'] : []),
        ...oauthChanged,
      );
    }
    for (const field of ['syncIntervalSeconds', 'callTimeoutMs', 'outputTokenCap', 'autoApproveTools'] as const) {
      if (input[field] === undefined) continue;
      (data as Record<string, unknown>)[field] = input[field];
      changed.push(field);
    }
    const upstream = await this.prisma.$transaction(async (tx) => {
      const written = await this.write(current, data, expectedVersion, tx);
      await recordAudited(tx, audit, { upstream: written, changed });
      return written;
    });
    if (input.syncIntervalSeconds !== undefined) await this.schedule.scheduleUpstreamSync(upstream);
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return { upstream, changed };
  }

  /** Disabled: its tools leave every key's list at once and calls to them are refused; no sync runs. */
  async setEnabled(
    orgId: string,
    upstreamId: string,
    enabled: boolean,
    audit: AuditedBy<UpstreamServer>,
    expectedVersion?: number,
  ): Promise<UpstreamServer> {
    const current = await this.registry.getUpstream(orgId, upstreamId);
    const upstream = await this.writeAudited(current, { enabled }, expectedVersion, audit);
    await this.schedule.scheduleUpstreamSync(upstream);
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return upstream;
  }

  /** Paused: the periodic sync's job scheduler is removed (and list_changed syncs skipped) until resumed. */
  async setSyncPaused(
    orgId: string,
    upstreamId: string,
    syncPaused: boolean,
    audit: AuditedBy<UpstreamServer>,
    expectedVersion?: number,
  ): Promise<UpstreamServer> {
    const current = await this.registry.getUpstream(orgId, upstreamId);
    const upstream = await this.writeAudited(current, { syncPaused }, expectedVersion, audit);
    await this.schedule.scheduleUpstreamSync(upstream);
    return upstream;
  }

  /**
   * Deletes an upstream: its tools and catalog entries are removed, its users' connections and its
   * sealed secrets dropped, its scheduler removed. The row stays (deletedAt) so the ledger's past
   * spend is still reported under its namespace; the namespace is free for a new upstream.
   */
  async deleteUpstream(
    orgId: string,
    upstreamId: string,
    audit: AuditedBy<UpstreamServer>,
    expectedVersion?: number,
  ): Promise<UpstreamServer> {
    const current = await this.registry.getUpstream(orgId, upstreamId);
    const now = new Date();
    const upstream = await this.prisma.$transaction(async (tx) => {
      const deleted = await this.write(
        current,
        { deletedAt: now, enabled: false, secretsEnc: null },
        expectedVersion,
        tx,
      );
      await tx.tool.updateMany({ where: { orgId, upstreamId: current.id, removedAt: null }, data: { removedAt: now } });
      await tx.catalogEntry.updateMany({
        where: { orgId, upstreamId: current.id, removedAt: null },
        data: { removedAt: now },
      });
      await tx.userConnection.deleteMany({ where: { upstreamId: current.id } });
      await recordAudited(tx, audit, deleted);
      return deleted;
    });
    await this.schedule.scheduleUpstreamSync(upstream);
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return upstream;
  }

  /** `write` and its audit row, in one transaction. */
  private writeAudited(
    current: UpstreamServer,
    data: Prisma.UpstreamServerUpdateManyMutationInput,
    expectedVersion: number | undefined,
    audit: AuditedBy<UpstreamServer>,
  ): Promise<UpstreamServer> {
    return this.prisma.$transaction(async (tx) => {
      const written = await this.write(current, data, expectedVersion, tx);
      await recordAudited(tx, audit, written);
      return written;
    });
  }

  /** One conditional write: only the version read (when given), always the next version. */
  private async write(
    current: UpstreamServer,
    data: Prisma.UpstreamServerUpdateManyMutationInput,
    expectedVersion: number | undefined,
    tx: Prisma.TransactionClient = this.prisma,
  ): Promise<UpstreamServer> {
    const where = {
      id: current.id,
      orgId: current.orgId,
      deletedAt: null,
      ...(expectedVersion !== undefined ? { version: expectedVersion } : {}),
    };
    try {
      const { count } = await tx.upstreamServer.updateMany({ where, data: { ...data, version: { increment: 1 } } });
      if (count === 0) {
        const now = await tx.upstreamServer.findFirst({
          where: { id: current.id, deletedAt: null },
          select: { version: true },
        });
        if (!now)
          throw new CatalogException(
            CatalogExceptionCode.UpstreamNotFound,
            `upstream ${current.id} not found`,
            'upstreamId',
          );
        throw new StaleWriteException('upstream', expectedVersion ?? now.version, now.version);
      }
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw new CatalogException(
          CatalogExceptionCode.NamespaceTaken,
          `namespace "${current.namespace}" is already used in this organization`,
          'namespace',
        );
      }
      throw err;
    }
    return tx.upstreamServer.findUniqueOrThrow({ where: { id: current.id } });
  }
}
