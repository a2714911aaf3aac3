export enum AdmissionExceptionCode {
  /** Redis did not acknowledge a call's completion (settlement and usage event): the call may have run unrecorded. */
  CompletionNotRecorded = 'COMPLETION_NOT_RECORDED',
  /** Admission failed for a reason that is not the caller's (a script error): nothing was run or charged. */
  AdmissionFailed = 'ADMISSION_FAILED',
}

/**
 * A failure of the money path. Its message and `data` are what an agent may see (a stable code and
 * the call id, as JSON-RPC -32603 `error.data`); the Redis or Postgres detail goes to the edge's log
 * line naming the same call id, never to the agent.
 */
export class AdmissionException extends Error {
  readonly data: { code: AdmissionExceptionCode; callId?: string };

  constructor(
    readonly code: AdmissionExceptionCode,
    message: string,
    callId?: string,
  ) {
    super(message);
    this.name = 'AdmissionException';
    this.data = callId ? { code, callId } : { code };
  }
}
