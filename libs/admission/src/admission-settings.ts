import type { ReplicaWait } from '@tollgate/redis';
import type { AdmissionClock } from './admission-clock';

/** What admission needs from the deployment, passed in by the app that runs it (the edge). */
export interface AdmissionSettings {
  /** How long a reservation, a concurrency slot or a lease lives in Redis without its edge. */
  reservationTtlMs: number;
  /** Admit calls far from every limit against leased allowance, without a round trip. */
  leases: boolean;
  /** A lease no call has used for this long goes back. */
  leaseIdleMs: number;
  /** Opt-in: a completion waits until this many replicas have it (REDIS_COMPLETION_WAIT_*); absent or 0: no wait. */
  completionWait?: ReplicaWait;
  /** Absent: the system clock (SYSTEM_CLOCK). The money model passes a virtual one. */
  clock?: AdmissionClock;
}

export const ADMISSION_SETTINGS = Symbol('ADMISSION_SETTINGS');
