import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { IdentityException, IdentityExceptionCode } from './identity.exception';

/** A domain name as claims store it: lower case, no trailing dot, at least two labels. */
const DOMAIN = /^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

export interface EmailDomainClaimView {
  domain: string;
  orgId: string;
  createdAt: Date;
}

/** The domain part of an email, lower-cased; null when there is none. */
export function emailDomainOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 1) return null;
  return (
    email
      .slice(at + 1)
      .trim()
      .toLowerCase()
      .replace(/\.$/, '') || null
  );
}

/**
 * Email domains claimed per organisation (by a platform admin). A claimed domain's addresses
 * belong to that org alone: another org can neither create a user there nor sign one in through
 * its identity provider, so an org admin cannot pose as someone else's employee.
 */
@Injectable()
export class EmailDomainService {
  constructor(private readonly prisma: PrismaService) {}

  list(orgId: string): Promise<EmailDomainClaimView[]> {
    return this.prisma.orgEmailDomain.findMany({ where: { orgId }, orderBy: { domain: 'asc' } });
  }

  /**
   * Claims a domain for the org (idempotent); 409 when another org holds it. A new claim and its
   * audit row commit together; claiming again writes neither. Racing claims meet at the unique
   * domain (ON CONFLICT DO NOTHING), so exactly one of them creates it.
   */
  async claim(
    orgId: string,
    rawDomain: string,
    audit: AuditedBy<{ domain: string; usersInOtherOrgs: number }>,
  ): Promise<{ claim: EmailDomainClaimView; created: boolean; usersInOtherOrgs: number }> {
    const domain = normaliseDomain(rawDomain);
    const usersInOtherOrgs = await this.prisma.user.count({
      where: { orgId: { not: orgId }, email: { endsWith: `@${domain}`, mode: 'insensitive' } },
    });
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.orgEmailDomain.createMany({ data: [{ domain, orgId }], skipDuplicates: true });
      const claim = await tx.orgEmailDomain.findUnique({ where: { domain } });
      if (claim?.orgId !== orgId)
        throw new IdentityException(
          IdentityExceptionCode.EmailDomainClaimed,
          `domain ${domain} is claimed by another organization`,
          'domain',
        );
      if (count > 0) await recordAudited(tx, audit, { domain, usersInOtherOrgs });
      return { claim, created: count > 0, usersInOtherOrgs };
    });
  }

  /** Releases a claim; false (and no audit row) when the org did not claim the domain. */
  async release(orgId: string, rawDomain: string, audit: AuditedBy<string>): Promise<boolean> {
    const domain = normaliseDomain(rawDomain);
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.orgEmailDomain.deleteMany({ where: { orgId, domain } });
      if (count > 0) await recordAudited(tx, audit, domain);
      return count > 0;
    });
  }

  /** The org that claims this email's domain when it is not `orgId`; null when free or its own. */
  async claimedByOther(orgId: string, email: string): Promise<string | null> {
    const domain = emailDomainOf(email);
    if (!domain) return null;
    const claim = await this.prisma.orgEmailDomain.findUnique({ where: { domain }, select: { orgId: true } });
    return claim && claim.orgId !== orgId ? claim.orgId : null;
  }

  /** Refuses (409 naming `email`) an email whose domain another org claims. */
  async assertMayUse(orgId: string, email: string): Promise<void> {
    if (await this.claimedByOther(orgId, email))
      throw new IdentityException(
        IdentityExceptionCode.EmailDomainClaimed,
        `the domain of "${email}" is claimed by another organization; its addresses can only be users there`,
        'email',
      );
  }
}

function normaliseDomain(raw: string): string {
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(domain))
    throw new IdentityException(
      IdentityExceptionCode.InvalidEmailDomain,
      `"${raw.slice(0, 100)}" is not a domain name (like example.com)`,
      'domain',
    );
  return domain;
}
