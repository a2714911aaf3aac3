// oidc-provider ships no types; Tollgate's authorization server and the tests use a small part of it.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
  export const errors: any;
}
