import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService, UpstreamServer } from '@tollgate/db';
import { sha256Hex, stableStringify } from '@tollgate/kernel';
import { UpstreamSpec } from '@tollgate/upstream';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';

export interface RegisterUpstreamInput {
  namespace: string;
  displayName?: string;
  transport: 'STDIO' | 'STREAMABLE_HTTP' | 'SSE';
  command?: string;
  args?: string[];
  url?: string;
  headers?: Record<string, string>;
  syncIntervalSeconds?: number;
  callTimeoutMs?: number;
  outputTokenCap?: number | null;
}

/** The upstream MCP servers of each organisation. */
@Injectable()
export class UpstreamRegistry {
  constructor(private readonly prisma: PrismaService) {}

  async registerUpstream(orgId: string, input: RegisterUpstreamInput): Promise<UpstreamServer> {
    if (input.transport === 'STDIO' && !input.command) {
      throw new CatalogException(CatalogExceptionCode.InvalidUpstream, 'a stdio upstream needs a command', 'command');
    }
    if (input.transport !== 'STDIO' && !input.url) {
      throw new CatalogException(CatalogExceptionCode.InvalidUpstream, `a ${input.transport.toLowerCase()} upstream needs a url`, 'url');
    }
    try {
      return await this.prisma.upstreamServer.create({
        data: {
          orgId,
          namespace: input.namespace,
          displayName: input.displayName,
          transport: input.transport,
          command: input.transport === 'STDIO' ? input.command : null,
          args: input.transport === 'STDIO' ? (input.args ?? []) : [],
          url: input.transport === 'STDIO' ? null : input.url,
          settings: { headers: input.headers ?? {} },
          syncIntervalSeconds: input.syncIntervalSeconds ?? 3600,
          callTimeoutMs: input.callTimeoutMs ?? 30_000,
          outputTokenCap: input.outputTokenCap ?? null,
        },
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw new CatalogException(CatalogExceptionCode.NamespaceTaken, `namespace "${input.namespace}" is already used in this organization`, 'namespace');
      }
      throw err;
    }
  }

  listUpstreams(orgId: string) {
    return this.prisma.upstreamServer.findMany({ where: { orgId }, orderBy: { createdAt: 'asc' } });
  }

  async getUpstream(orgId: string, upstreamId: string): Promise<UpstreamServer> {
    const row = await this.prisma.upstreamServer.findFirst({ where: { orgId, id: upstreamId } });
    if (!row) throw new CatalogException(CatalogExceptionCode.UpstreamNotFound, `upstream ${upstreamId} not found`, 'upstreamId');
    return row;
  }

  /** Every enabled upstream, for the worker's schedules. */
  listAllEnabled() {
    return this.prisma.upstreamServer.findMany({ where: { enabled: true } });
  }
}

/** How to connect to an upstream row. */
export function upstreamSpecOf(row: UpstreamServer): UpstreamSpec {
  const settings = (row.settings ?? {}) as { headers?: Record<string, string>; env?: Record<string, string> };
  return {
    id: row.id,
    orgId: row.orgId,
    namespace: row.namespace,
    transport: row.transport,
    command: row.command,
    args: row.args,
    url: row.url,
    headers: settings.headers ?? {},
    env: settings.env ?? {},
    callTimeoutMs: row.callTimeoutMs,
    version: sha256Hex(stableStringify([row.transport, row.command, row.args, row.url, row.settings, row.callTimeoutMs])),
  };
}
