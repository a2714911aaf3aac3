/**
 * `timeoutMs` for a test's `tollgate__run_script` that calls upstream tools: the sandbox's longest
 * wall time, not its 10 s default. On a loaded 2-core machine an inner call (a stdio upstream's
 * first answer) took longer than 10 s, the run stopped, its inner call was cancelled and the test
 * saw CANCELLED instead of the tool's answer. Tests of the time limit itself pass their own.
 */
export const SCRIPT_TIME_MS = 60_000;
