export * from './oauth-keys';
export * from './oauth-redis.adapter';
export * from './oauth-provider.factory';
export * from './sign-in-code.service';
export * from './oauth-grant-keys.service';
export * from './oauth-server.module';
