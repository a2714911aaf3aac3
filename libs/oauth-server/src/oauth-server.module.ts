import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { OAuthGrantKeys } from './oauth-grant-keys.service';
import { SignInCodeService } from './sign-in-code.service';

@Module({ imports: [IdentityModule], providers: [SignInCodeService, OAuthGrantKeys], exports: [SignInCodeService, OAuthGrantKeys] })
export class OAuthServerModule {}
