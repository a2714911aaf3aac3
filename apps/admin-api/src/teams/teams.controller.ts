import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post } from '@nestjs/common';
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
import { AdminPrincipal, auditBy, IdentityService, PeopleAdminService } from '@tollgate/identity';
import { changes } from '../audit/audit-changes';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { AddTeamMemberDto } from './add-team-member.dto';
import { CreateTeamDto } from './create-team.dto';
import { TeamMemberRemovedView, TeamMemberView, TeamView, toTeamMemberView, toTeamView } from './team.view';
import { RenameTeamDto, UpdateTeamMemberDto } from './update-team.dto';

@ApiTags('teams')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, team or user' })
@Controller('v1/orgs/:orgId/teams')
export class TeamsController {
  constructor(
    private readonly identity: IdentityService,
    private readonly people: PeopleAdminService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create a team' })
  @ApiCreatedResponse({ type: TeamView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A team with this name exists' })
  async createTeam(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreateTeamDto,
  ): Promise<TeamView> {
    const team = await this.identity.createTeam(orgId, dto, {
      by: auditBy(admin),
      entry: (created) => ({
        orgId,
        action: 'team.created',
        targetType: 'team',
        targetId: created.id,
        details: { name: created.name },
      }),
    });
    return toTeamView(team);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the teams of an organization' })
  @ApiOkResponse({ type: [TeamView] })
  async listTeams(@UuidParam('orgId') orgId: string): Promise<TeamView[]> {
    return (await this.identity.listTeams(orgId)).map(toTeamView);
  }

  @Post(':teamId/members')
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Add a user to a team (or change whether they administer it)' })
  @ApiCreatedResponse({ type: TeamMemberView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async addTeamMember(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('teamId') teamId: string,
    @Body() dto: AddTeamMemberDto,
  ): Promise<TeamMemberView> {
    const member = await this.identity.addTeamMember(orgId, teamId, dto, {
      by: auditBy(admin),
      entry: (added) => ({
        orgId,
        action: 'team.member-added',
        targetType: 'team',
        targetId: teamId,
        details: { userId: added.userId, isTeamAdmin: added.isTeamAdmin },
      }),
    });
    return toTeamMemberView(member);
  }

  @Patch(':teamId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Rename a team' })
  @ApiOkResponse({ type: TeamView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A team with this name exists' })
  async renameTeam(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('teamId') teamId: string,
    @Body() dto: RenameTeamDto,
  ): Promise<TeamView> {
    const { after } = await this.people.renameTeam(orgId, teamId, dto.name, {
      by: auditBy(admin),
      entry: (renamed) => ({
        orgId,
        action: 'team.updated',
        targetType: 'team',
        targetId: teamId,
        details: changes(renamed.before, renamed.after, ['name']),
      }),
    });
    return toTeamView(after);
  }

  @Get(':teamId/members')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the members of a team' })
  @ApiOkResponse({ type: [TeamMemberView] })
  async listTeamMembers(
    @UuidParam('orgId') orgId: string,
    @UuidParam('teamId') teamId: string,
  ): Promise<TeamMemberView[]> {
    return (await this.people.listMembers(orgId, teamId)).map(toTeamMemberView);
  }

  @Patch(':teamId/members/:userId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary: 'Make a member a team admin or not (a demoted admin’s TEAM_ADMIN tokens for the team are revoked)',
  })
  @ApiOkResponse({ type: TeamMemberView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async updateTeamMember(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('teamId') teamId: string,
    @UuidParam('userId') userId: string,
    @Body() dto: UpdateTeamMemberDto,
  ): Promise<TeamMemberView> {
    const { member } = await this.people.setTeamAdmin(orgId, teamId, userId, dto.isTeamAdmin, {
      by: auditBy(admin),
      entry: ({ revokedAdminTokenIds }) => ({
        orgId,
        action: 'team.member-updated',
        targetType: 'team',
        targetId: teamId,
        details: { userId, isTeamAdmin: dto.isTeamAdmin, revokedAdminTokenIds },
      }),
    });
    return toTeamMemberView(member);
  }

  @Delete(':teamId/members/:userId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Remove a user from a team: their live keys in the team and their TEAM_ADMIN tokens for it are revoked (every edge, within a second)',
  })
  @ApiOkResponse({ type: TeamMemberRemovedView })
  async removeTeamMember(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('teamId') teamId: string,
    @UuidParam('userId') userId: string,
  ): Promise<TeamMemberRemovedView> {
    const removed = await this.people.removeMember(orgId, teamId, userId, {
      by: auditBy(admin),
      entry: (r) => ({
        orgId,
        action: 'team.member-removed',
        targetType: 'team',
        targetId: teamId,
        details: { userId, ...r },
      }),
    });
    return { teamId, userId, ...removed };
  }
}
