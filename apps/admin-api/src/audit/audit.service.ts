import { Injectable, Logger } from '@nestjs/common';
import { AuditEvent, Prisma, PrismaService } from '@tollgate/db';
import type { AdminActor, AdminPrincipal } from '@tollgate/identity';
import { scrubAuditDetails } from './audit-details';

export interface AuditEntry {
  /** The organisation the change belongs to; null for platform-level changes. */
  orgId: string | null;
  /** `<thing>.<verb>`, e.g. `team.created`, `key.revoked`. */
  action: string;
  targetType: string;
  targetId?: string | null;
  /** What changed, without secrets (scrubbed again before writing). */
  details?: Record<string, unknown>;
}

export const MAX_AUDIT_PAGE = 500;

/** Who acted, as the row keeps it: the token and the person it names (a principal without one: its id and role). */
function actorOf(p: AdminPrincipal): AdminActor {
  return (
    p.actor ?? {
      tokenId: p.tokenId,
      tokenName: p.tokenId,
      tokenPrefix: null,
      role: p.role,
      user: null,
      ownerLabel: null,
    }
  );
}

/** The audit trail: one row per admin change, who (the token and its person, as they were) and what. */
@Injectable()
export class AuditService {
  private readonly logger = new Logger(AuditService.name);

  constructor(private readonly prisma: PrismaService) {}

  async record(actor: AdminPrincipal, entry: AuditEntry): Promise<void> {
    await this.prisma.auditEvent.create({
      data: {
        orgId: entry.orgId,
        actorId: actor.tokenId,
        actor: actorOf(actor) as unknown as Prisma.InputJsonObject,
        action: entry.action,
        targetType: entry.targetType,
        targetId: entry.targetId ?? null,
        details: scrubAuditDetails(entry.details ?? {}) as Prisma.InputJsonValue,
      },
    });
    this.logger.log(
      `audit action=${entry.action} org=${entry.orgId ?? '-'} target=${entry.targetType}:${entry.targetId ?? '-'} actor=${actor.tokenId}`,
    );
  }

  /** The org's audit trail, latest first. */
  listForOrg(orgId: string, limit: number): Promise<AuditEvent[]> {
    return this.prisma.auditEvent.findMany({
      where: { orgId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: Math.min(Math.max(limit, 1), MAX_AUDIT_PAGE),
    });
  }
}
