import { Body, Controller, Get, HttpCode, HttpStatus, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy, IdentityService, MovedUser, PeopleAdminService } from '@tollgate/identity';
import { changes } from '../audit/audit-changes';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { CreateUserDto } from './create-user.dto';
import { MoveUserDto, UpdateUserDto } from './update-user.dto';
import { UserOffboardingService } from './user-offboarding.service';
import { MovedUserView, OffboardedUserView, UserView, toUserView } from './user.view';

@ApiTags('users')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, user or team' })
@Controller('v1/orgs/:orgId/users')
export class UsersController {
  constructor(
    private readonly identity: IdentityService,
    private readonly people: PeopleAdminService,
    private readonly offboarding: UserOffboardingService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create a user' })
  @ApiCreatedResponse({ type: UserView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A user with this email exists' })
  async createUser(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreateUserDto,
  ): Promise<UserView> {
    const user = await this.identity.createUser(orgId, dto, {
      by: auditBy(admin),
      entry: (created) => ({
        orgId,
        action: 'user.created',
        targetType: 'user',
        targetId: created.id,
        details: { email: created.email, name: created.name },
      }),
    });
    return toUserView(user);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the users of an organization' })
  @ApiOkResponse({ type: [UserView] })
  async listUsers(@UuidParam('orgId') orgId: string): Promise<UserView[]> {
    return (await this.identity.listUsers(orgId)).map(toUserView);
  }

  @Get(':userId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'Get a user' })
  @ApiOkResponse({ type: UserView })
  async getUser(@UuidParam('orgId') orgId: string, @UuidParam('userId') userId: string): Promise<UserView> {
    return toUserView(await this.identity.getUser(orgId, userId));
  }

  @Patch(':userId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Rename a user or change their email' })
  @ApiOkResponse({ type: UserView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A user with this email exists' })
  async updateUser(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @Body() dto: UpdateUserDto,
  ): Promise<UserView> {
    const { after } = await this.people.updateUser(orgId, userId, dto, {
      by: auditBy(admin),
      entry: (updated) => ({
        orgId,
        action: 'user.updated',
        targetType: 'user',
        targetId: userId,
        details: changes(updated.before, updated.after, ['name', 'email']),
      }),
    });
    return toUserView(after);
  }

  @Post(':userId/move')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Move a user from one team to another, with their live keys (which spend for the new team from their next call); past spend stays with the old team',
  })
  @ApiOkResponse({ type: MovedUserView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'Same team, or the user is offboarded' })
  async moveUser(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @Body() dto: MoveUserDto,
  ): Promise<MovedUserView> {
    const view = (moved: MovedUser): MovedUserView => ({
      userId,
      fromTeamId: dto.fromTeamId,
      toTeamId: dto.toTeamId,
      isTeamAdmin: moved.member.isTeamAdmin,
      movedKeyIds: moved.movedKeyIds,
      revokedKeyIds: moved.revokedKeyIds,
      revokedAdminTokenIds: moved.revokedAdminTokenIds,
    });
    const moved = await this.people.moveUser(orgId, userId, dto, {
      by: auditBy(admin),
      entry: (m) => ({ orgId, action: 'user.moved', targetType: 'user', targetId: userId, details: { ...view(m) } }),
    });
    return view(moved);
  }

  @Post(':userId/offboard')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Offboard a user in one call: every key (static and OAuth) and admin token of theirs revoked, their team memberships ended, their upstream connections forgotten. Every edge refuses them within a second; their budgets and past spend stay in reports. Repeating it is harmless',
  })
  @ApiOkResponse({ type: OffboardedUserView })
  async offboardUser(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
  ): Promise<OffboardedUserView> {
    return this.offboarding.offboard(orgId, userId, {
      by: auditBy(admin),
      entry: (done) => ({
        orgId,
        action: 'user.offboarded',
        targetType: 'user',
        targetId: userId,
        details: { userId, ...done },
      }),
    });
  }
}
