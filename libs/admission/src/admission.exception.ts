export enum AdmissionExceptionCode {
  /** Redis did not acknowledge a call's completion (settlement and usage event): the call may have run unrecorded. */
  CompletionNotRecorded = 'COMPLETION_NOT_RECORDED',
}

export class AdmissionException extends Error {
  constructor(
    readonly code: AdmissionExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdmissionException';
  }
}
