import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { AdminPrincipal } from '@tollgate/identity';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { ErrorBodyView } from '../common/error-body.view';
import { MeView, toMeView } from './me.view';

@ApiTags('me')
@ApiBearerAuth()
@Controller('v1/me')
export class MeController {
  @Get()
  @ApiOperation({ summary: 'The caller: role, organisation, team and user its credentials name (the console builds its navigation from this)' })
  @ApiOkResponse({ type: MeView })
  @ApiUnauthorizedResponse({ type: ErrorBodyView })
  me(@CurrentAdmin() admin: AdminPrincipal): MeView {
    return toMeView(admin);
  }
}
