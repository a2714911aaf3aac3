import { ForbiddenException, Inject, Injectable } from '@nestjs/common';
import {
  CatalogException,
  CatalogExceptionCode,
  CatalogScheduleService,
  RegisterUpstreamInput,
  UpdateUpstreamInput,
  UpstreamChange,
  UpstreamLifecycleService,
  UpstreamRegistry,
} from '@tollgate/upstream-registry';
import type { AuditedBy } from '@tollgate/audit';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService, Tool, UpstreamServer } from '@tollgate/db';
import type { AdminPrincipal } from '@tollgate/identity';
import { OutboundException, checkOutboundUrl } from '@tollgate/outbound';

/**
 * The admin use cases around upstreams: the stdio gate, registration with its sync schedule and
 * first sync, on-demand syncs, and the tool listing. Catalog rules stay in @tollgate/upstream-registry.
 */
@Injectable()
export class UpstreamAdminService {
  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly schedule: CatalogScheduleService,
    private readonly lifecycle: UpstreamLifecycleService,
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {}

  /** Registers an upstream, schedules its periodic sync and queues the first one. */
  async registerUpstream(
    admin: AdminPrincipal,
    orgId: string,
    input: RegisterUpstreamInput,
    audit: AuditedBy<{ upstream: UpstreamServer; jobId: string }>,
  ): Promise<{ upstream: UpstreamServer; jobId: string }> {
    // A stdio upstream runs a command on Tollgate's own hosts: a platform decision by default.
    if (input.transport === 'STDIO' && admin.role !== 'PLATFORM_ADMIN' && !this.config.admin.allowStdioForOrgAdmins) {
      throw new ForbiddenException({
        message:
          'only a platform admin may register a STDIO upstream (it runs a command on Tollgate’s hosts); use STREAMABLE_HTTP or SSE, or ask the operator to set ALLOW_STDIO_FOR_ORG_ADMINS=true',
        code: 'STDIO_NOT_ALLOWED',
      });
    }
    if (input.transport !== 'STDIO' && input.url) await checkUpstreamAddress(input.url);
    return this.lifecycle.registerUpstream(orgId, input, audit);
  }

  listUpstreams(orgId: string): Promise<UpstreamServer[]> {
    return this.registry.listUpstreams(orgId);
  }

  getUpstream(orgId: string, upstreamId: string): Promise<UpstreamServer> {
    return this.registry.getUpstream(orgId, upstreamId);
  }

  async requestSync(orgId: string, upstreamId: string): Promise<{ upstream: UpstreamServer; jobId: string }> {
    const upstream = await this.registry.getUpstream(orgId, upstreamId);
    return { upstream, jobId: await this.schedule.requestSync(orgId, upstream.id, 'admin') };
  }

  /** Exposes the upstream's tools and prompts unprefixed (or prefixed again); 409 on a name collision. */
  setExposure(
    orgId: string,
    upstreamId: string,
    exposeUnprefixed: boolean,
    audit: AuditedBy<UpstreamServer>,
  ): Promise<UpstreamServer> {
    return this.lifecycle.setExposure(orgId, upstreamId, exposeUnprefixed, audit);
  }

  /** Edits an upstream; a new URL passes the same outbound rule as at registration. */
  async updateUpstream(
    orgId: string,
    upstreamId: string,
    input: UpdateUpstreamInput,
    audit: AuditedBy<UpstreamChange>,
    expectedVersion?: number,
  ): Promise<UpstreamChange> {
    if (input.url !== undefined) await checkUpstreamAddress(input.url);
    return this.lifecycle.updateUpstream(orgId, upstreamId, input, audit, expectedVersion);
  }

  /** Every tool the catalog knows for the upstream, removed ones included (they carry removedAt). */
  async listTools(orgId: string, upstreamId: string): Promise<{ upstream: UpstreamServer; tools: Tool[] }> {
    const upstream = await this.registry.getUpstream(orgId, upstreamId);
    const tools = await this.prisma.tool.findMany({
      where: { orgId, upstreamId: upstream.id },
      orderBy: { name: 'asc' },
    });
    return { upstream, tools };
  }
}

/**
 * The outbound rule at registration: no loopback, private or link-local address, and no
 * credentials in the URL (they would be stored in clear; headers and bearer tokens are sealed).
 */
async function checkUpstreamAddress(url: string): Promise<void> {
  try {
    await checkOutboundUrl(url);
  } catch (err) {
    if (err instanceof OutboundException)
      throw new CatalogException(CatalogExceptionCode.InvalidUpstream, `url refused: ${err.message}`, 'url');
    throw err;
  }
}
