import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { AdminPrincipal, AdminTokenService } from '@tollgate/identity';
import { Strategy } from 'passport-http-bearer';
import { ADMIN_REALM } from '../common/errors/admin-exception.filter';

export const ADMIN_BEARER_STRATEGY = 'admin-bearer';

/** `Authorization: Bearer <token>` -> the admin principal (an admin token or the bootstrap token). */
@Injectable()
export class AdminBearerStrategy extends PassportStrategy(Strategy, ADMIN_BEARER_STRATEGY) {
  constructor(
    private readonly tokens: AdminTokenService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {
    super({ realm: ADMIN_REALM });
  }

  async validate(token: string): Promise<AdminPrincipal | false> {
    return (await this.tokens.resolveAdminToken(token, this.config.admin.bootstrapToken)) ?? false;
  }
}
