import { Module } from '@nestjs/common';
import { AdminTokenService } from './admin-token.service';
import { EmailDomainService } from './email-domain.service';
import { IdentityService } from './identity.service';
import { OrgLifecycleService } from './org-lifecycle.service';
import { PeopleAdminService } from './people-admin.service';
import { PrincipalResolver } from './principal-resolver.service';

const SERVICES = [
  IdentityService,
  PrincipalResolver,
  AdminTokenService,
  OrgLifecycleService,
  PeopleAdminService,
  EmailDomainService,
];

@Module({ providers: SERVICES, exports: SERVICES })
export class IdentityModule {}
