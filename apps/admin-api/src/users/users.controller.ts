import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { CreateUserDto } from './create-user.dto';
import { UserView, toUserView } from './user.view';

@ApiTags('users')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization' })
@Controller('v1/orgs/:orgId/users')
export class UsersController {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create a user' })
  @ApiCreatedResponse({ type: UserView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A user with this email exists' })
  async createUser(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string, @Body() dto: CreateUserDto): Promise<UserView> {
    const user = await this.identity.createUser(orgId, dto);
    await this.audit.record(admin, { orgId, action: 'user.created', targetType: 'user', targetId: user.id, details: { email: user.email, name: user.name } });
    return toUserView(user);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the users of an organization' })
  @ApiOkResponse({ type: [UserView] })
  async listUsers(@UuidParam('orgId') orgId: string): Promise<UserView[]> {
    return (await this.identity.listUsers(orgId)).map(toUserView);
  }
}
