import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Inject, Injectable } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { SecretBox } from '@tollgate/secret-box';
import { isUuid } from '@tollgate/kernel';

export interface OrgIdentityProviderView {
  orgId: string;
  issuer: string;
  clientId: string;
  emailClaim: string;
  createUsers: boolean;
  newUserTeamId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrgIdentityProviderConnection {
  orgId: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  emailClaim: string;
  /** Create a person the provider vouches for but Tollgate does not know, as a member of this team. */
  newUserTeamId: string | null;
}

const VIEW_FIELDS = {
  orgId: true,
  issuer: true,
  clientId: true,
  emailClaim: true,
  createUsers: true,
  newUserTeamId: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** An organisation's OIDC connection to its identity provider; the client secret is kept sealed. */
@Injectable()
export class OrgIdentityProviderService {
  private readonly box: SecretBox;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.box = new SecretBox(config.security.encryptionKeys);
  }

  get(orgId: string): Promise<OrgIdentityProviderView | null> {
    return this.prisma.orgIdentityProvider.findUnique({ where: { orgId }, select: VIEW_FIELDS });
  }

  /** Sets the connection; without `clientSecret` the stored one stays (the caller checks one exists). */
  put(
    orgId: string,
    input: {
      issuer: string;
      clientId: string;
      clientSecret?: string;
      emailClaim?: string;
      createUsers?: boolean;
      newUserTeamId?: string | null;
    },
    audit: AuditedBy<OrgIdentityProviderView>,
  ): Promise<OrgIdentityProviderView> {
    const sealed =
      input.clientSecret === undefined ? undefined : this.box.seal(input.clientSecret, secretContext(orgId));
    const fields = {
      issuer: input.issuer.replace(/\/+$/, ''),
      clientId: input.clientId,
      emailClaim: input.emailClaim ?? 'email',
      createUsers: input.createUsers ?? false,
      newUserTeamId: input.newUserTeamId ?? null,
    };
    return this.prisma.$transaction(async (tx) => {
      const saved = await tx.orgIdentityProvider.upsert({
        where: { orgId },
        create: { orgId, ...fields, clientSecretSealed: sealed ?? '' },
        update: { ...fields, ...(sealed ? { clientSecretSealed: sealed } : {}) },
        select: VIEW_FIELDS,
      });
      await recordAudited(tx, audit, saved);
      return saved;
    });
  }

  /** Removes the connection; false (and no audit row) when there was none. */
  async remove(orgId: string, audit: AuditedBy<void>): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.orgIdentityProvider.deleteMany({ where: { orgId } });
      if (count > 0) await recordAudited(tx, audit, undefined);
      return count > 0;
    });
  }

  /** The connection with its secret opened, for the sign-in itself. */
  async connection(orgId: string): Promise<OrgIdentityProviderConnection | null> {
    const row = await this.prisma.orgIdentityProvider.findUnique({ where: { orgId } });
    if (!row) return null;
    return {
      orgId,
      issuer: row.issuer,
      clientId: row.clientId,
      clientSecret: this.box.open(row.clientSecretSealed, secretContext(orgId)),
      emailClaim: row.emailClaim,
      newUserTeamId: row.createUsers ? row.newUserTeamId : null,
    };
  }

  /** The organisation with this slug or id that has an identity provider, or null. */
  async orgWithProvider(slugOrId: string): Promise<{ id: string; slug: string } | null> {
    const isId = isUuid(slugOrId);
    return this.prisma.organization.findFirst({
      where: { ...(isId ? { id: slugOrId } : { slug: slugOrId }), deletedAt: null, identityProvider: { isNot: null } },
      select: { id: true, slug: true },
    });
  }

  /**
   * The organisations with an identity provider that have a (not offboarded) user with this
   * email, by name: the sign-in page offers them to choose from, never picks one itself.
   */
  async orgsFor(email: string): Promise<{ id: string; name: string; slug: string }[]> {
    const users = await this.prisma.user.findMany({
      where: {
        email: { equals: email.trim(), mode: 'insensitive' },
        offboardedAt: null,
        org: { deletedAt: null, identityProvider: { isNot: null } },
      },
      select: { org: { select: { id: true, name: true, slug: true } } },
      take: 20,
    });
    return users.map((u) => u.org).sort((a, b) => a.name.localeCompare(b.name));
  }
}

function secretContext(orgId: string): string {
  return `org-identity-provider:${orgId}`;
}
