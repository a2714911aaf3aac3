import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { stripBrackets } from './outbound-address-rule';
import { OutboundGuard, outboundGuard } from './outbound-guard';

/** Which guard a connection asks: the process's (read at connect time, so boot order does not matter), or a given one. */
export type GuardSource = OutboundGuard | (() => OutboundGuard);

function guardOf(source: GuardSource): OutboundGuard {
  return typeof source === 'function' ? source() : source;
}

/**
 * An undici Agent whose every new connection resolves the host itself, checks every address and
 * connects only to an allowed one. The Host header and TLS SNI and certificate check stay on the
 * name (undici derives them from the origin, not from the address connected to). Redirects and
 * reconnections open new connections, so each is checked: DNS rebinding gains nothing.
 */
export function outboundDispatcher(options: Agent.Options = {}, guard: GuardSource = outboundGuard): Agent {
  const connectOptions = typeof options.connect === 'object' ? options.connect : {};
  const connectTo = buildConnector(connectOptions as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    guardOf(guard)
      .addressesFor(opts.hostname)
      .then(
        ([first]) =>
          connectTo(
            { ...opts, hostname: first.address, servername: opts.servername || serverNameOf(opts.hostname) },
            callback,
          ),
        (err: Error) => callback(err, null),
      );
  };
  return new Agent({ ...options, connect });
}

// SNI carries names only (RFC 6066); undici leaves it unset for IP literals too.
function serverNameOf(hostname: string): string | undefined {
  const name = stripBrackets(hostname);
  return /^[\d.]+$/.test(name) || name.includes(':') ? undefined : name;
}

let processDispatcher: Agent | undefined;

/** The process's guarded dispatcher for one-off requests (OAuth endpoints, webhooks). */
export function outboundFetchDispatcher(): Agent {
  return (processDispatcher ??= outboundDispatcher());
}

/**
 * A `fetch` whose connections go through `outboundDispatcher` (undici's fetch, so redirects it
 * follows are checked too). For the MCP SDK's auth helpers (`fetchFn`) and webhooks.
 */
export function outboundFetch(dispatcher: Agent = outboundFetchDispatcher()): typeof fetch {
  return async (input, init) =>
    asGlobalResponse(await undiciFetch(input as never, { ...(init as object), dispatcher } as never));
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

// The undici package's Response is not the runtime's: callers (the MCP SDK) test `instanceof Response`.
function asGlobalResponse(res: Awaited<ReturnType<typeof undiciFetch>>): Response {
  const body = NULL_BODY_STATUS.has(res.status) ? null : (res.body as ReadableStream<Uint8Array> | null);
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: [...res.headers] });
  Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
  return out;
}

/**
 * A `lookup` for node:net sockets (http.Agent's `lookup` option) that answers only addresses the
 * rule allows. Sockets skip `lookup` for IP-literal hosts: check those with `literalRefusal`.
 */
export function outboundLookup(guard: GuardSource = outboundGuard): LookupFunction {
  return ((
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    guardOf(guard)
      .addressesFor(hostname)
      .then(
        (addresses) => {
          const wanted = familyOf(options.family);
          const usable = wanted ? addresses.filter((a) => a.family === wanted) : addresses;
          if (usable.length === 0)
            return callback(
              Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
              '',
              0,
            );
          if (options.all) callback(null, usable);
          else callback(null, usable[0].address, usable[0].family);
        },
        (err: Error) => callback(err, '', 0),
      );
  }) as unknown as LookupFunction;
}

function familyOf(family: number | string | undefined): 4 | 6 | undefined {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return undefined;
}
