import { FieldValidationException } from '../common/errors/field-validation.exception';
import { isUuid } from '@tollgate/kernel';

/** Where a page of the audit trail ended: the last row's time and id (rows are ordered by both, newest first). */
export interface AuditPosition {
  createdAt: Date;
  id: string;
}

const CURSOR_VERSION = 'a1';
// 9999-12-31T23:59:59.999Z: a later instant prints as `+010000-…`, which Postgres refuses (a 500, not a 400).
const LAST_MS = 253402300799999;

/** An opaque cursor for the page after `at`: base64url of a version, the time in ms and the id. */
export function encodeAuditCursor(at: AuditPosition): string {
  return Buffer.from(`${CURSOR_VERSION}|${at.createdAt.getTime()}|${at.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; anything this API did not write is a 400 naming `cursor`. */
export function decodeAuditCursor(cursor: string): AuditPosition {
  const bad = () => new FieldValidationException('cursor', ['cursor is not one this API returned']);
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw bad();
  const [version, ms, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (version !== CURSOR_VERSION || rest.length > 0 || !/^\d{1,15}$/.test(ms ?? '') || !isUuid(id)) {
    throw bad();
  }
  if (Number(ms) > LAST_MS) throw bad();
  const createdAt = new Date(Number(ms));
  return { createdAt, id: id.toLowerCase() };
}
