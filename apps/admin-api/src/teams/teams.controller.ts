import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { AddTeamMemberDto } from './add-team-member.dto';
import { CreateTeamDto } from './create-team.dto';
import { TeamMemberView, TeamView, toTeamMemberView, toTeamView } from './team.view';

@ApiTags('teams')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, team or user' })
@Controller('v1/orgs/:orgId/teams')
export class TeamsController {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create a team' })
  @ApiCreatedResponse({ type: TeamView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'A team with this name exists' })
  async createTeam(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string, @Body() dto: CreateTeamDto): Promise<TeamView> {
    const team = await this.identity.createTeam(orgId, dto);
    await this.audit.record(admin, { orgId, action: 'team.created', targetType: 'team', targetId: team.id, details: { name: team.name } });
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
    const member = await this.identity.addTeamMember(orgId, teamId, dto);
    await this.audit.record(admin, {
      orgId,
      action: 'team.member-added',
      targetType: 'team',
      targetId: teamId,
      details: { userId: member.userId, isTeamAdmin: member.isTeamAdmin },
    });
    return toTeamMemberView(member);
  }
}
