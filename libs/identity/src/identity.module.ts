import { Module } from '@nestjs/common';
import { AdminTokenService } from './admin-token.service';
import { IdentityService } from './identity.service';
import { PrincipalResolver } from './principal-resolver.service';

@Module({ providers: [IdentityService, PrincipalResolver, AdminTokenService], exports: [IdentityService, PrincipalResolver, AdminTokenService] })
export class IdentityModule {}
