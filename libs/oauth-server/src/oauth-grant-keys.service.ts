import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { PrismaService } from '@tollgate/db';
import { IdentityService, VirtualKeyView } from '@tollgate/identity';

/** What a person chose at consent: who, for which team, which client. */
export interface ConsentChoice {
  orgId: string;
  userId: string;
  teamId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
}

/** The key a token is issued for; `created` when this issue made it (the code was just redeemed). */
export interface GrantKey {
  keyId: string;
  created: (ConsentChoice & { key: VirtualKeyView }) | null;
}

const hashGrant = (grantId: string) => createHash('sha256').update(grantId).digest('base64url');

/**
 * Which key (kind OAUTH) an authorization grant stands for. Consent records the choice; the key
 * itself is made when the client redeems its authorization code (the first token issued from the
 * grant), so a consent whose code is never redeemed leaves no key. Kept in Postgres with the grant.
 */
@Injectable()
export class OAuthGrantKeys {
  constructor(
    private readonly prisma: PrismaService,
    private readonly identity: IdentityService,
  ) {}

  async recordConsent(grantId: string, choice: ConsentChoice, ttlSeconds: number): Promise<void> {
    const data = { ...choice, keyId: null, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
    await this.prisma.oAuthGrantKey.upsert({
      where: { grantIdHash: hashGrant(grantId) },
      create: { grantIdHash: hashGrant(grantId), ...data },
      update: data,
    });
  }

  /**
   * The grant's key for a token being issued: made on the first issue (code redemption), checked
   * live afterwards (refresh); null once the key is revoked or the grant unknown. The binding and
   * its audit row (by the consenting person, from `audit`) commit together, with the key if made.
   */
  async keyForToken(grantId: string, audit: (choice: ConsentChoice) => AuditedBy<GrantKey>): Promise<GrantKey | null> {
    const row = await this.prisma.oAuthGrantKey.findFirst({
      where: { grantIdHash: hashGrant(grantId), expiresAt: { gt: new Date() } },
    });
    if (!row) return null;
    if (row.keyId)
      return (await this.identity.findLiveOAuthKey(row.keyId)) ? { keyId: row.keyId, created: null } : null;
    const choice: ConsentChoice = {
      orgId: row.orgId,
      userId: row.userId,
      teamId: row.teamId,
      clientId: row.clientId,
      clientName: row.clientName,
      redirectHost: row.redirectHost,
    };
    try {
      return await this.prisma.$transaction(async (tx) => {
        const key = await this.identity.findOrCreateOAuthKey(row.orgId, choice, tx);
        // Only the first issue binds. One that lost rolls back (a key it made goes with it) and
        // reads what the winner bound.
        const { count } = await tx.oAuthGrantKey.updateMany({
          where: { grantIdHash: row.grantIdHash, keyId: null },
          data: { keyId: key.id },
        });
        if (count === 0) throw new LostGrantRace();
        const bound: GrantKey = { keyId: key.id, created: { ...choice, key } };
        await recordAudited(tx, audit(choice), bound);
        return bound;
      });
    } catch (err) {
      if (err instanceof LostGrantRace) return this.keyForToken(grantId, audit);
      throw err;
    }
  }
}

/** Thrown inside the binding's transaction to roll it back when another issue bound the grant first. */
class LostGrantRace extends Error {}
