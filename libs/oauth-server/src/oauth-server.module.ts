import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { OAuthGrantKeys } from './oauth-grant-keys.service';
import { OAuthRegistrationLimiter } from './oauth-registration-limiter.service';

const SERVICES = [OAuthGrantKeys, OAuthRegistrationLimiter];

@Module({ imports: [IdentityModule], providers: SERVICES, exports: SERVICES })
export class OAuthServerModule {}
