import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RedisClient } from './redis-client.factory';

/** A Lua script as Redis runs it: its source (the `.lua` files it is made of, in order) and SHA-1. */
export interface LuaScript {
  /** For log lines and test names. */
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** A script's KEYS and ARGV. */
export interface ScriptCall {
  keys: string[];
  args: (string | number)[];
}

/**
 * A script with its typed codec: the one place that turns a typed input into KEYS and ARGV and
 * the script's reply into a typed result, so no caller counts positions in either.
 */
export interface ScriptCodec<I, O> {
  readonly script: LuaScript;
  encode(input: I): ScriptCall;
  decode(reply: unknown, input: I): O;
}

/**
 * Reads a `.lua` file that sits beside the calling module (pass its `__dirname`). The build copies
 * `.lua` files next to the compiled `.js` (tools/build/build.mjs), so the same path works from the
 * TypeScript sources (tests) and from `dist/` (the apps). Read once, when the module loads.
 */
export function readLuaFile(dir: string, file: string): string {
  return readFileSync(path.join(dir, file), 'utf8');
}

/** A script made of Lua sources run as one (function libraries first, then the script's body). */
export function luaScript(name: string, ...sources: string[]): LuaScript {
  const source = sources.join('\n');
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** An amount in a script's reply: scripts answer amounts as decimal strings (see `luaAmount`). */
export function replyAmount(v: unknown): bigint {
  // ioredis decodes an integer reply near 2^53 one off (9007199254740991 arrives as ...992), so
  // an amount answered as a Lua number could be wrong by the time it is read: refuse it here.
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw new Error(`script reply: not an amount string: ${String(v)}`);
  return BigInt(v);
}

/** A small integer in a script's reply (a status, a count, a duration in ms). */
export function replyInt(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new Error(`script reply: not an integer: ${String(v)}`);
  return n;
}

/** A script's reply that must be an array (a Lua table). */
export function replyArray(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new Error(`script reply: not an array: ${String(v)}`);
  return v;
}

/**
 * Runs a Lua script by its SHA (EVALSHA), sending its source once when the node that owns the keys
 * does not have it (first use, a restart, a failover, SCRIPT FLUSH). EVAL, not SCRIPT LOAD +
 * EVALSHA: it goes where the keys live (SCRIPT LOAD has no key, so a cluster client would send it
 * to any node) and leaves the script cached there.
 */
export async function evalCached(
  client: RedisClient,
  script: { sha: string; source: string },
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
    return client.eval(script.source, keys.length, ...keys, ...args);
  }
}

/** Runs a script through its codec (EVALSHA, its source sent once where the keys' node lacks it). */
export async function runScript<I, O>(client: RedisClient, codec: ScriptCodec<I, O>, input: I): Promise<O> {
  const { keys, args } = codec.encode(input);
  return codec.decode(await evalCached(client, codec.script, keys, args), input);
}

/** The largest amount a script handles exactly: Lua numbers are doubles (and the API's limit, see microsToJson). */
export const LARGEST_SCRIPT_AMOUNT = 2n ** 53n - 1n;

/**
 * An amount as a script argument: a decimal string of a whole number from 0 to 2^53 - 1. Beyond
 * that Lua's arithmetic is no longer exact, so the codec refuses it rather than let a counter drift.
 */
export function luaAmount(v: bigint): string {
  if (v < 0n || v > LARGEST_SCRIPT_AMOUNT) throw new RangeError(`amount out of the scripts' exact range: ${v}`);
  return v.toString();
}
