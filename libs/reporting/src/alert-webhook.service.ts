import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { AlertWebhook, PrismaService } from '@tollgate/db';
import { OutboundException, checkOutboundUrl } from '@tollgate/outbound';
import { SecretBox } from '@tollgate/secret-box';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { newWebhookSecret } from './webhook-signature';

export const MAX_WEBHOOKS_PER_ORG = 10;
const MAX_URL_LENGTH = 2048;

export interface CreateWebhookInput {
  url: string;
  description?: string;
}

/** The sealed secret is bound to its org and webhook, so a copied `secretEnc` opens nowhere else. */
function secretContext(orgId: string, webhookId: string): string {
  return `alert-webhook:${orgId}:${webhookId}`;
}

/** Where an organisation's budget alerts go. The signing secret is stored sealed and shown once. */
@Injectable()
export class AlertWebhookService {
  private readonly box: SecretBox;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.box = new SecretBox(config.security.encryptionKeys);
  }

  /** Creates a webhook; the returned secret is never shown again. */
  async createWebhook(
    orgId: string,
    input: CreateWebhookInput,
    audit: AuditedBy<AlertWebhook>,
  ): Promise<{ webhook: AlertWebhook; secret: string }> {
    const url = validateWebhookUrl(input.url);
    await checkWebhookAddress(url);
    if ((await this.prisma.alertWebhook.count({ where: { orgId } })) >= MAX_WEBHOOKS_PER_ORG) {
      throw new ReportingException(
        ReportingExceptionCode.TooManyWebhooks,
        `an organization may have at most ${MAX_WEBHOOKS_PER_ORG} alert webhooks`,
        'url',
      );
    }
    const id = randomUUID();
    const secret = newWebhookSecret();
    const webhook = await this.prisma.$transaction(async (tx) => {
      const created = await tx.alertWebhook.create({
        data: {
          id,
          orgId,
          url,
          description: input.description ?? null,
          secretEnc: this.box.seal(secret, secretContext(orgId, id)),
        },
      });
      await recordAudited(tx, audit, created);
      return created;
    });
    return { webhook, secret };
  }

  listWebhooks(orgId: string): Promise<AlertWebhook[]> {
    return this.prisma.alertWebhook.findMany({ where: { orgId }, orderBy: { createdAt: 'asc' } });
  }

  async deleteWebhook(orgId: string, webhookId: string, audit: AuditedBy<AlertWebhook>): Promise<AlertWebhook> {
    const hook = await this.prisma.alertWebhook.findFirst({ where: { orgId, id: webhookId } });
    if (!hook)
      throw new ReportingException(ReportingExceptionCode.WebhookNotFound, `alert webhook ${webhookId} not found`);
    await this.prisma.$transaction(async (tx) => {
      await tx.alertWebhook.delete({ where: { id: hook.id } });
      await recordAudited(tx, audit, hook);
    });
    return hook;
  }

  /** The plaintext signing secret, for the worker that signs deliveries. */
  signingSecret(hook: Pick<AlertWebhook, 'id' | 'orgId' | 'secretEnc'>): string {
    return this.box.open(hook.secretEnc, secretContext(hook.orgId, hook.id));
  }
}

/** http(s) only, no credentials in the URL (they would be stored in clear and logged by proxies). */
export function validateWebhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ReportingException(ReportingExceptionCode.InvalidWebhook, 'url must be an absolute http(s) URL', 'url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ReportingException(ReportingExceptionCode.InvalidWebhook, 'url must use http or https', 'url');
  if (url.username || url.password)
    throw new ReportingException(
      ReportingExceptionCode.InvalidWebhook,
      'url must not contain credentials; the signature authenticates Tollgate',
      'url',
    );
  if (raw.length > MAX_URL_LENGTH)
    throw new ReportingException(
      ReportingExceptionCode.InvalidWebhook,
      `url must be at most ${MAX_URL_LENGTH} characters`,
      'url',
    );
  return url.toString();
}

/** The outbound rule at registration: a webhook may not point at loopback, private or link-local addresses. */
async function checkWebhookAddress(url: string): Promise<void> {
  try {
    await checkOutboundUrl(url);
  } catch (err) {
    if (err instanceof OutboundException)
      throw new ReportingException(ReportingExceptionCode.InvalidWebhook, `url refused: ${err.message}`, 'url');
    throw err;
  }
}
