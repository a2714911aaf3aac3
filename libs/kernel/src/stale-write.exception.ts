/**
 * A conditional write (If-Match) found the row at another version than the client read: the
 * admin API answers 412, and the client reads the row again before retrying.
 */
export class StaleWriteException extends Error {
  constructor(
    readonly what: string,
    readonly expectedVersion: number,
    readonly currentVersion: number | null,
  ) {
    super(
      currentVersion === null
        ? `the ${what} does not exist yet, so it cannot match If-Match version ${expectedVersion}`
        : `the ${what} changed since it was read: it is at version ${currentVersion}, not ${expectedVersion}; read it again (ETag) and retry`,
    );
    this.name = 'StaleWriteException';
  }
}
