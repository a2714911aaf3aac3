export * from './secret-token';
export * from './identity.exception';
export * from './principal';
export * from './identity.service';
export * from './principal-resolver.service';
export * from './admin-token.service';
export * from './identity.module';
export * from './oauth-token-store';
