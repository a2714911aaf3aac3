export * from './outbound.exception';
export * from './outbound-address-rule';
export * from './outbound-guard';
export * from './outbound-connect';
