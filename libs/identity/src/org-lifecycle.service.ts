import { Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Organization, PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { IdentityException, IdentityExceptionCode } from './identity.exception';
import { IdentityService, ORG_CHANGED_CHANNEL } from './identity.service';

export interface UpdateOrganizationInput {
  name?: string;
  timeZone?: string;
  currency?: string;
  autoApproveTools?: boolean;
  trailMode?: 'OFF' | 'METADATA' | 'FULL';
  trailRetentionDays?: number;
}

/** Keep: the organisation is hidden and its data stays. Purge: its data goes, the ledger and audit stay. */
export type OrgDeletionMode = 'keep' | 'purge';

export interface OrgChange {
  before: Organization;
  after: Organization;
}

/**
 * Day-2 changes of an organisation: rename, time zone, review settings, disable, delete. Every
 * change that alters what an edge decides (zone, disabled, deleted) is published on
 * ORG_CHANGED_CHANNEL so every edge drops the org's cached principals within a second.
 */
@Injectable()
export class OrgLifecycleService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly identity: IdentityService,
  ) {}

  /**
   * A time-zone change keeps the periods running at that instant on the old zone's bounds: the
   * old zone and the instant are stored, and budgets compute windows from both (kernel budgetClock).
   * The write is conditional on the zone read, so two concurrent changes cannot both record the
   * same previous zone; the loser gets 409 and retries.
   */
  async updateOrganization(
    orgId: string,
    input: UpdateOrganizationInput,
    audit: AuditedBy<OrgChange>,
  ): Promise<OrgChange> {
    const before = await this.identity.getOrganization(orgId);
    const zoneChanges = input.timeZone !== undefined && input.timeZone !== before.timeZone;
    const change = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.organization.updateMany({
        where: { id: orgId, deletedAt: null, timeZone: before.timeZone },
        data: {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.currency !== undefined ? { currency: input.currency } : {}),
          ...(input.autoApproveTools !== undefined ? { autoApproveTools: input.autoApproveTools } : {}),
          ...(input.trailMode !== undefined ? { trailMode: input.trailMode } : {}),
          ...(input.trailRetentionDays !== undefined ? { trailRetentionDays: input.trailRetentionDays } : {}),
          ...(zoneChanges
            ? { timeZone: input.timeZone, previousTimeZone: before.timeZone, timeZoneChangedAt: new Date() }
            : {}),
        },
      });
      if (count === 0)
        throw new IdentityException(
          IdentityExceptionCode.Conflict,
          `organization ${orgId} changed its time zone concurrently; read it again and retry`,
          'timeZone',
        );
      const updated = { before, after: await tx.organization.findUniqueOrThrow({ where: { id: orgId } }) };
      await recordAudited(tx, audit, updated);
      return updated;
    });
    // Edges hold the zone and the trail mode in their cached principals.
    const trailChanges = input.trailMode !== undefined && input.trailMode !== before.trailMode;
    if (zoneChanges || trailChanges) await this.redis.publish(ORG_CHANGED_CHANNEL, orgId);
    return change;
  }

  /** Disabled: every edge refuses the org's keys (ORG_DISABLED) within a second; nothing is deleted. */
  async setDisabled(orgId: string, disabled: boolean, audit: AuditedBy<OrgChange>): Promise<OrgChange> {
    const before = await this.identity.getOrganization(orgId);
    const change = await this.prisma.$transaction(async (tx) => {
      if (Boolean(before.disabledAt) !== disabled) {
        // Guarded on the state read, so a racing enable/disable keeps its own timestamp.
        await tx.organization.updateMany({
          where: { id: orgId, deletedAt: null, disabledAt: disabled ? null : { not: null } },
          data: { disabledAt: disabled ? new Date() : null },
        });
      }
      const set = { before, after: await tx.organization.findUniqueOrThrow({ where: { id: orgId } }) };
      await recordAudited(tx, audit, set);
      return set;
    });
    await this.redis.publish(ORG_CHANGED_CHANNEL, orgId);
    return change;
  }

  /**
   * Deletes a disabled organisation. `keep` hides it (every route answers 404) and keeps its rows;
   * `purge` deletes the org row, and with it (foreign-key cascade) its teams, users, keys,
   * upstreams, budgets, policies, prices, limits, tokens and connections. The usage ledger,
   * its daily rollups and the audit trail reference no foreign key and stay for finance.
   */
  async deleteOrganization(
    orgId: string,
    mode: OrgDeletionMode,
    audit: AuditedBy<Organization>,
  ): Promise<Organization> {
    const org = await this.identity.getOrganization(orgId);
    if (!org.disabledAt) {
      throw new IdentityException(
        IdentityExceptionCode.OrgNotDisabled,
        `organization ${orgId} must be disabled before it is deleted (POST /v1/orgs/${orgId}/disable)`,
        'orgId',
      );
    }
    await this.prisma.$transaction(async (tx) => {
      if (mode === 'purge') await tx.organization.delete({ where: { id: orgId } });
      else await tx.organization.update({ where: { id: orgId }, data: { deletedAt: new Date() } });
      await recordAudited(tx, audit, org);
    });
    await this.redis.publish(ORG_CHANGED_CHANNEL, orgId);
    return org;
  }
}
