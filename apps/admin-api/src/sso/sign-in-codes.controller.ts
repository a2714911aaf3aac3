import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy, IdentityService } from '@tollgate/identity';
import { SignInCodeService } from '@tollgate/sso';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { IssueSignInCodeDto } from './issue-sign-in-code.dto';

export class SignInCodeView {
  @ApiProperty({
    example: 'ABCD-EFGH-JKLM-NPQR',
    description: 'Shown once: the user types it with their email to sign in to an OAuth client',
  })
  code!: string;
  @ApiProperty() expiresAt!: Date;
}

@ApiTags('oauth')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or user' })
@Controller('v1/orgs/:orgId/users/:userId/sign-in-codes')
export class SignInCodesController {
  constructor(
    private readonly identity: IdentityService,
    private readonly codes: SignInCodeService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      "Issue a user a sign-in code for the OAuth sign-in page (local sign-in; replaces the user's previous code)",
  })
  @ApiCreatedResponse({ type: SignInCodeView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'USER_OFFBOARDED: the user was offboarded' })
  async issue(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @Body() dto: IssueSignInCodeDto,
  ): Promise<SignInCodeView> {
    // An offboarded person gets no way back in (409 USER_OFFBOARDED).
    await this.identity.getActiveUser(orgId, userId);
    const issued = await this.codes.issue(orgId, userId, dto.ttlSeconds ?? 86_400, {
      by: auditBy(admin),
      entry: ({ expiresAt }) => ({
        orgId,
        action: 'user.sign-in-code-issued',
        targetType: 'user',
        targetId: userId,
        details: { expiresAt: expiresAt.toISOString() },
      }),
    });
    return issued;
  }
}
