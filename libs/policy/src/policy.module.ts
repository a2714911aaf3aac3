import { Module } from '@nestjs/common';
import { PolicyAdminService } from './policy-admin.service';
import { PolicyService } from './policy.service';

@Module({ providers: [PolicyService, PolicyAdminService], exports: [PolicyService, PolicyAdminService] })
export class PolicyModule {}
