/** What one script run may use. Every limit is enforced by the sandbox, not by the script. */
export interface SandboxLimits {
  /** Wall time from start to answer, tool calls included. */
  wallTimeMs: number;
  /** QuickJS heap (malloc) limit. */
  memoryBytes: number;
  /**
   * QuickJS stack limit; deep recursion fails with a stack overflow instead of crashing. WebAssembly
   * frames also use Node's own stack (about 1 MB), so this stays well below it: 256 KiB is about
   * 1,300 levels of a small recursive function.
   */
  stackBytes: number;
  /** Tool calls the script may start; further calls are refused with `TOOL_CALL_LIMIT`. */
  maxToolCalls: number;
  /** Characters of console output and of the returned value's JSON, each. */
  maxOutputChars: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  wallTimeMs: 10_000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxToolCalls: 50,
  maxOutputChars: 64_000,
};

/** Hard ceilings: a caller may lower a limit, never raise it past these. */
export const MAX_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  wallTimeMs: 60_000,
  memoryBytes: 128 * 1024 * 1024,
  stackBytes: 384 * 1024,
  maxToolCalls: 500,
  maxOutputChars: 1_000_000,
};

export enum SandboxLimitKind {
  Time = 'TIME',
  Memory = 'MEMORY',
  ToolCalls = 'TOOL_CALLS',
  Output = 'OUTPUT',
}

/** The limits that apply: defaults, narrowed by the caller, never above the ceilings. */
export function effectiveSandboxLimits(requested: Partial<SandboxLimits> = {}): SandboxLimits {
  const out = { ...DEFAULT_SANDBOX_LIMITS };
  for (const key of Object.keys(out) as (keyof SandboxLimits)[]) {
    const wanted = requested[key];
    if (wanted === undefined) continue;
    if (!Number.isInteger(wanted) || wanted <= 0)
      throw new RangeError(`sandbox limit ${key} must be a positive integer, got ${wanted}`);
    out[key] = Math.min(wanted, MAX_SANDBOX_LIMITS[key]);
  }
  return out;
}
