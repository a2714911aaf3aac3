export * from './admission-settings';
export * from './admission-clock';
export type { LeaseRequest, LeasedCall } from './lease-kinds';
export * from './admission-leases';
export * from './call-admission.service';
export * from './admission.exception';
export * from './admission.module';
