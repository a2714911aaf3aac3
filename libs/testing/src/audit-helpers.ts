import type { AuditAction, AuditedBy, AuditTargetType } from '@tollgate/audit';
import { systemActor } from '@tollgate/audit';

/** How a test's own change through a lib is audited: an ordinary row, by `system:test`. */
export function auditedByTest<T>(action: AuditAction, targetType: AuditTargetType): AuditedBy<T> {
  return { by: systemActor('system:test'), entry: () => ({ orgId: null, action, targetType }) };
}

/** A client that can run raw SQL in the test's database (a PrismaClient). */
interface RawSql {
  $executeRawUnsafe(query: string): Promise<number>;
}

/**
 * Makes Postgres refuse every audit row of `actions` (a trigger in the test's own database, not a
 * mock), so a test can show that a change whose row cannot be written is not made either. Returns
 * the function that lifts the refusal.
 */
export async function refuseAuditRows(db: RawSql, ...actions: AuditAction[]): Promise<() => Promise<void>> {
  await db.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit row refused by the test'; END $$`);
  await db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_refuse_audit ON "AuditEvent"`);
  await db.$executeRawUnsafe(`
    CREATE TRIGGER test_refuse_audit BEFORE INSERT ON "AuditEvent" FOR EACH ROW
    WHEN (NEW."action" IN (${actions.map((a) => `'${a}'`).join(', ')})) EXECUTE FUNCTION test_refuse_audit()`);
  return async () => {
    await db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_refuse_audit ON "AuditEvent"`);
  };
}
