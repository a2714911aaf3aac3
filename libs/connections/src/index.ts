export * from './connections.exception';
export * from './oauth-callback-url';
export * from './upstream-oauth.service';
export * from './user-connection.service';
export * from './connect-flow.service';
export * from './connections.module';
