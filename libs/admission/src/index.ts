export * from './admission-settings';
export type { LeaseRequest, LeasedCall } from './lease-kinds';
export * from './admission-leases';
export * from './call-admission.service';
export * from './admission.exception';
export type { OutboxEntry } from './call-completion';
export * from './admission.module';
