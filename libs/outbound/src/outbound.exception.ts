export enum OutboundExceptionCode {
  /** The address (or every address a name resolves to) is in a refused range. */
  AddressRefused = 'OUTBOUND_ADDRESS_REFUSED',
  /** The URL itself is refused: not http(s), or it carries credentials. */
  UrlRefused = 'OUTBOUND_URL_REFUSED',
  /** The name did not resolve when a connection was to be made. */
  NameUnresolved = 'OUTBOUND_NAME_UNRESOLVED',
}

/** Env variable an operator sets to allow chosen ranges; named in every refusal. */
export const OUTBOUND_ALLOW_SETTING = 'OUTBOUND_ALLOW_CIDRS';

/**
 * An outbound request Tollgate will not make on a tenant's behalf. The message names the rule and
 * the address, never anything the destination answered.
 */
export class OutboundException extends Error {
  constructor(
    readonly code: OutboundExceptionCode,
    message: string,
    /** The refused address, when the refusal is about one. */
    readonly address?: string,
  ) {
    super(message);
    this.name = 'OutboundException';
  }
}

/** The OutboundException in `err` or its `cause` chain (undici's fetch wraps connect errors). */
export function outboundExceptionIn(err: unknown): OutboundException | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundException) return e;
  }
  return undefined;
}
