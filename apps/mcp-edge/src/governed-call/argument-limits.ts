/**
 * Limits on a tool call's `arguments`, checked before any work is done for the call. Deeper,
 * larger or wider arguments are no tool's honest input, and past some depth our own JSON
 * serialization (recursive in V8) overflows the stack.
 */
export interface ArgumentLimits {
  /** Nesting of objects and arrays; `{}` is depth 1. */
  maxDepth: number;
  /** UTF-8 bytes of the arguments serialized as JSON. */
  maxBytes: number;
  /** Object keys in the whole argument tree. */
  maxKeys: number;
  /** Keys of any one object. */
  maxKeysPerObject: number;
}

export const ARGUMENT_LIMITS: ArgumentLimits = {
  maxDepth: 64,
  maxBytes: 1024 * 1024,
  maxKeys: 10_000,
  maxKeysPerObject: 1_000,
};

export type ArgumentLimitName = keyof ArgumentLimits;

export type ArgumentCheck = { ok: true } | { ok: false; limit: ArgumentLimitName; allowed: number; measured: number };

/**
 * Measures `args` against `limits` without recursion (an explicit stack), so no input can
 * overflow the check itself. Depth and key counts are measured over the whole tree, with an upper
 * bound of the JSON size; only arguments whose bound passes the size limit are serialized to
 * measure it exactly (the call's usual small arguments are serialized once, on the way upstream).
 */
export function checkArguments(args: unknown, limits: ArgumentLimits = ARGUMENT_LIMITS): ArgumentCheck {
  if (args === undefined) return { ok: true };
  let maxDepth = 0;
  let keys = 0;
  let widest = 0;
  // An upper bound of the UTF-8 JSON size: brackets, one comma per entry, each key as a string
  // plus its colon, and each primitive's own bound.
  let sizeBound = typeof args === 'object' && args !== null ? 0 : primitiveSizeBound(args);
  const stack: { value: unknown; depth: number }[] = [{ value: args, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) maxDepth = depth;
    if (Array.isArray(value)) {
      sizeBound += 2 + value.length;
      for (const item of value)
        if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: depth + 1 });
        else sizeBound += primitiveSizeBound(item);
      continue;
    }
    let own = 0;
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      own++;
      sizeBound += primitiveSizeBound(key) + 2;
      const item = (value as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: depth + 1 });
      else sizeBound += primitiveSizeBound(item);
    }
    sizeBound += 2;
    keys += own;
    if (own > widest) widest = own;
  }
  if (maxDepth > limits.maxDepth) return { ok: false, limit: 'maxDepth', allowed: limits.maxDepth, measured: maxDepth };
  if (widest > limits.maxKeysPerObject)
    return { ok: false, limit: 'maxKeysPerObject', allowed: limits.maxKeysPerObject, measured: widest };
  if (keys > limits.maxKeys) return { ok: false, limit: 'maxKeys', allowed: limits.maxKeys, measured: keys };
  if (sizeBound <= limits.maxBytes) return { ok: true };
  const text = JSON.stringify(args);
  // A string's UTF-8 size is at most 3 bytes per UTF-16 unit: most arguments need no byte count.
  const bytes = text.length * 3 <= limits.maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) return { ok: false, limit: 'maxBytes', allowed: limits.maxBytes, measured: bytes };
  return { ok: true };
}

/**
 * At least as many UTF-8 bytes as JSON.stringify writes for a primitive: a string's UTF-16 units
 * take at most 6 bytes each (`\u001f`, or 3 bytes of UTF-8), plus its quotes; a number at most 25
 * characters (`-0.0000012345678901234567`); true, false, null fewer.
 */
function primitiveSizeBound(value: unknown): number {
  return typeof value === 'string' ? 2 + 6 * value.length : 25;
}

const LIMIT_WORDING: Record<ArgumentLimitName, (allowed: number, measured: number) => string> = {
  maxDepth: (a, m) => `are nested ${m} levels deep, over the limit of ${a}`,
  maxBytes: (a, m) => `are ${m} bytes as JSON, over the limit of ${a}`,
  maxKeys: (a, m) => `hold ${m} object keys in all, over the limit of ${a}`,
  maxKeysPerObject: (a, m) => `hold an object with ${m} keys, over the limit of ${a} per object`,
};

/** The sentence for a refused check: "The arguments of "x" are nested 20001 levels deep, over the limit of 64." */
export function describeArgumentCheck(tool: string, check: Exclude<ArgumentCheck, { ok: true }>): string {
  return `The arguments of "${tool}" ${LIMIT_WORDING[check.limit](check.allowed, check.measured)}.`;
}
