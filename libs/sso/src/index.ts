export * from './sso-sign-in.exception';
export * from './org-identity-provider.service';
export * from './oidc-sign-in.service';
export * from './sign-in-code.service';
export * from './single-sign-on.module';
