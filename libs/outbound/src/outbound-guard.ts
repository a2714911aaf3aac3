import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { OutboundAddressRule, RefusedAddressKind, stripBrackets } from './outbound-address-rule';
import { OUTBOUND_ALLOW_SETTING, OutboundException, OutboundExceptionCode } from './outbound.exception';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (dns.lookup, `all`). Injectable for tests. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: HostResolver = (hostname) =>
  lookup(hostname, { all: true, verbatim: true }) as Promise<ResolvedAddress[]>;

/** A registration check does not wait longer than this for DNS. */
const REGISTRATION_LOOKUP_TIMEOUT_MS = 5000;

/**
 * Applies the outbound-address rule to names and URLs: resolves a name itself, so the address
 * checked is the address connected to (a second lookup by the socket could answer otherwise).
 */
export class OutboundGuard {
  constructor(
    readonly rule: OutboundAddressRule,
    private readonly resolve: HostResolver = systemResolver,
  ) {}

  /**
   * For one connection: the addresses of `host` the rule allows, in resolver order. Throws
   * OUTBOUND_ADDRESS_REFUSED when there is none; DNS errors pass through as they are.
   */
  async addressesFor(host: string): Promise<ResolvedAddress[]> {
    const name = stripBrackets(host);
    const family = isIP(name);
    if (family) {
      const refused = this.literalRefusal(name);
      if (refused) throw refused;
      return [{ address: name, family: family as 4 | 6 }];
    }
    const resolved = await this.resolve(name);
    const allowed = resolved.filter((a) => this.rule.refusalOf(a.address) === null);
    if (allowed.length > 0) return allowed;
    const first = resolved[0];
    if (!first) throw new OutboundException(OutboundExceptionCode.AddressRefused, `${name} resolves to no address`);
    throw refusal(name, first.address, this.rule.refusalOf(first.address)!);
  }

  /** The refusal for an IP-literal host (sockets skip the lookup for those), or null; names pass. */
  literalRefusal(host: string): OutboundException | null {
    const ip = stripBrackets(host);
    if (!isIP(ip)) return null;
    const kind = this.rule.refusalOf(ip);
    return kind ? refusal(ip, ip, kind) : null;
  }

  /**
   * At registration: http(s) only, no credentials, and no resolved address refused. A name that
   * resolves to several addresses is refused if ANY of them is (connections would skip that one,
   * but a name that mixes internal and public addresses is not one to accept). A name that does
   * not resolve yet is accepted: every connection is checked again when it is made.
   */
  async checkUrl(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundException(OutboundExceptionCode.UrlRefused, 'must be an absolute http:// or https:// URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundException(
        OutboundExceptionCode.UrlRefused,
        `must use http or https, not ${url.protocol.replace(/:$/, '')}`,
      );
    }
    if (url.username || url.password) {
      throw new OutboundException(
        OutboundExceptionCode.UrlRefused,
        'must not contain credentials (user:password@): they would be stored and logged in clear; give them as headers or a bearer token, which are stored encrypted',
      );
    }
    const name = stripBrackets(url.hostname);
    if (isIP(name)) {
      const refused = this.literalRefusal(name);
      if (refused) throw refused;
      return url;
    }
    const resolved = await withTimeout(this.resolve(name), REGISTRATION_LOOKUP_TIMEOUT_MS).catch(
      () => [] as ResolvedAddress[],
    );
    for (const a of resolved) {
      const kind = this.rule.refusalOf(a.address);
      if (kind) throw refusal(name, a.address, kind);
    }
    return url;
  }
}

function refusal(name: string, address: string, kind: RefusedAddressKind): OutboundException {
  const article = kind === 'unspecified' ? 'an' : 'a';
  const what =
    name === address
      ? `${address} is ${article} ${kind} address`
      : `${name} resolves to ${address}, ${article} ${kind} address`;
  return new OutboundException(
    OutboundExceptionCode.AddressRefused,
    `${what}: Tollgate makes no requests to ${kind} addresses on a tenant's behalf (${OutboundExceptionCode.AddressRefused}); an operator can allow the range with ${OUTBOUND_ALLOW_SETTING}`,
    address,
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The process's rule: set once at boot from OUTBOUND_ALLOW_CIDRS (ConfigModule); until then the
// default rule (nothing allowed beyond public addresses), so a forgotten install fails safe.
let processGuard = new OutboundGuard(new OutboundAddressRule());

/** Installs the operator's allow list for every outbound request this process makes. */
export function installOutboundAllowList(allowCidrs: readonly string[]): void {
  processGuard = new OutboundGuard(new OutboundAddressRule(allowCidrs));
}

/** The process's guard (see `installOutboundAllowList`). */
export function outboundGuard(): OutboundGuard {
  return processGuard;
}

/**
 * The registration-time check of a URL a tenant gives (upstream, webhook): resolves with the
 * parsed URL, or throws an OutboundException naming the rule.
 */
export function checkOutboundUrl(url: string, guard: OutboundGuard = processGuard): Promise<URL> {
  return guard.checkUrl(url);
}
