import type { IncomingMessage } from 'node:http';
import { ARGUMENT_LIMITS } from '../governed-call/argument-limits';

/**
 * What a request body may be before it is parsed. JSON.parse of a hostile body of megabytes (deeply
 * nested, or millions of tiny values) holds the event loop, which every key shares, for a long
 * time; these are checked on the raw bytes as they arrive, so such a body is refused after its
 * first offending chunk, before any parse.
 */
export const BODY_LIMITS = {
  // Arguments may be 1 MiB as JSON (ARGUMENT_LIMITS), plus room for the envelope and its `_meta`:
  // a larger body is no single call's (MCP has no batches since 2025-06-18).
  maxBytes: ARGUMENT_LIMITS.maxBytes + 64 * 1024,
  // Arguments may nest 64 deep (ARGUMENT_LIMITS): plus the envelope (request, params, arguments),
  // a meta-tool's own arguments and a batch.
  maxDepth: 68,
  // Object keys plus array items in the whole body: arguments hold at most 10,000 keys.
  maxValues: 100_000,
  // Object keys alone: arguments hold at most 10,000 (ARGUMENT_LIMITS), twice that leaves room for
  // the envelope and other messages. A body of a million tiny keys is refused after its first
  // 20,000 instead of being parsed into an object of a million properties (the costliest parse).
  maxKeys: 2 * ARGUMENT_LIMITS.maxKeys,
};

export type BodyLimitName = keyof typeof BODY_LIMITS;

export type JsonBody =
  | { ok: true; value: unknown }
  | {
      ok: false;
      status: number;
      code: number;
      message: string;
      /** The rest of the body was not read: the connection cannot carry another request. */
      unread?: boolean;
    };

/**
 * Follows the JSON structure byte by byte (strings and escapes skipped) and counts nesting depth
 * and values (object keys, and array items less one per array): one pass, state carried across
 * chunks, no allocation past the container stack (bounded by the depth limit).
 */
export class JsonShapeScanner {
  private depth = 0;
  private values = 0;
  private keys = 0;
  private inString = false;
  private escaped = false;
  // 1 for an array, 0 for an object, per open container (a plain array: a typed one is an
  // ArrayBuffer made and collected per request, and a small body opens only a few containers).
  private readonly arrays: number[] = [];

  constructor(private readonly limits: Pick<typeof BODY_LIMITS, 'maxDepth' | 'maxValues' | 'maxKeys'> = BODY_LIMITS) {}

  /** Scans one more chunk; returns the first limit it passes, or null. */
  feed(chunk: Uint8Array): { limit: 'maxDepth' | 'maxValues' | 'maxKeys'; allowed: number } | null {
    let { depth, values, keys, inString, escaped } = this;
    const { arrays } = this;
    const { maxDepth, maxValues, maxKeys } = this.limits;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > maxDepth) return { limit: 'maxDepth', allowed: maxDepth };
        arrays[depth] = c === 0x5b ? 1 : 0;
      } else if (c === 0x7d || c === 0x5d) depth--;
      // A key's colon.
      else if (c === 0x3a) {
        if (++keys > maxKeys) return { limit: 'maxKeys', allowed: maxKeys };
        if (++values > maxValues) return { limit: 'maxValues', allowed: maxValues };
      }
      // The comma before an array's next item.
      else if (c === 0x2c && depth > 0 && arrays[depth] === 1) {
        if (++values > maxValues) return { limit: 'maxValues', allowed: maxValues };
      }
    }
    this.depth = depth;
    this.values = values;
    this.keys = keys;
    this.inString = inString;
    this.escaped = escaped;
    return null;
  }
}

const LIMIT_WORDING = {
  maxDepth: (n: number) => `nested deeper than ${n} levels`,
  maxValues: (n: number) => `holding more than ${n} keys and array items`,
  maxKeys: (n: number) => `holding more than ${n} object keys`,
};

/**
 * Reads and parses a JSON-RPC request body; malformed input becomes a JSON-RPC error, not a crash.
 * A body over a limit is answered at once, without reading the rest (`unread`).
 */
export function readJsonBody(req: IncomingMessage, limits = BODY_LIMITS): Promise<JsonBody> {
  // Events rather than `for await`: the async iterator costs more than the parse of a small body.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const shape = new JsonShapeScanner(limits);
    let size = 0;
    const refuse = (status: number, message: string) => {
      req.off('data', onData).off('end', onEnd).pause();
      resolve({ ok: false, status, code: -32600, message, unread: true });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) return refuse(413, `Request body larger than ${limits.maxBytes} bytes`);
      const over = shape.feed(chunk);
      if (over) return refuse(400, `Request body ${LIMIT_WORDING[over.limit](over.allowed)}: refused before parsing`);
      chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
        resolve({ ok: true, value: JSON.parse(text) });
      } catch (err) {
        resolve({ ok: false, status: 400, code: -32700, message: `Parse error: ${(err as Error).message}` });
      }
    };
    // A declared length over the limit is refused before a byte of the body is read.
    if (Number(req.headers['content-length']) > limits.maxBytes)
      return refuse(413, `Request body larger than ${limits.maxBytes} bytes`);
    req.on('data', onData).on('end', onEnd);
    req.on('error', (err) => resolve({ ok: false, status: 400, code: -32700, message: `Parse error: ${err.message}` }));
  });
}
