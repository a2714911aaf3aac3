import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { KeyPreviewService } from './key-preview.service';
import { KeyPreviewView } from './key-preview.view';

@ApiTags('virtual keys')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBodyView,
  description:
    'Unknown organization or key, or a key outside the caller’s reach (another user’s for a member, another team’s for a team admin)',
})
@Controller('v1/orgs/:orgId/keys/:keyId/preview')
export class KeyPreviewController {
  constructor(private readonly previews: KeyPreviewService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'What the key’s agent would see on connecting: its disclosure mode, initial tools/list and its tokens, and the hot tools',
  })
  @ApiOkResponse({ type: KeyPreviewView })
  async previewKey(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<KeyPreviewView> {
    return this.previews.previewKey(orgId, keyId);
  }
}
