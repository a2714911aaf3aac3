import type { MicrosInput } from '../lib/money';
import { formatMoney } from '../lib/money';
import { useSession } from '../session';

/** An amount in the org's currency, exact to the micro-unit. */
export function Money({ micros, testId }: { micros: MicrosInput; testId?: string }) {
  const { currency } = useSession();
  return (
    <span data-testid={testId} data-micros={String(micros)} style={{ fontVariantNumeric: 'tabular-nums' }}>
      {formatMoney(micros, currency)}
    </span>
  );
}
