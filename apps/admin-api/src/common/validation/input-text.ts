/** Deepest nesting of objects and arrays a request body may have; no admin DTO needs more than 3. */
export const MAX_INPUT_DEPTH = 32;

export interface BadInput {
  /** The JSON path of the value at fault (`name`, `oauth.clientId`, `allow[2]`), or the root's name. */
  path: string;
  message: string;
}

interface Frame {
  value: unknown;
  key: string | number | null;
  parent: Frame | null;
  depth: number;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function pathOf(frame: Frame, rootName: string): string {
  const parts: string[] = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) {
    if (typeof f.key === 'number') parts.push(`[${f.key}]`);
    else if (IDENTIFIER.test(f.key)) parts.push(f.parent?.key === null ? f.key : `.${f.key}`);
    // JSON.stringify escapes NUL and lone surrogates, so the path itself is printable.
    else parts.push(`[${JSON.stringify(f.key)}]`);
  }
  return parts.length === 0 ? rootName : parts.reverse().join('');
}

/** Why a string cannot be stored as Postgres text or sent on as UTF-8, or null when it can. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds an unpaired surrogate)';
  return null;
}

/**
 * The first string (value or property name) Postgres or a UTF-8 encoder would refuse, or the
 * first container nested deeper than `maxDepth`, found without recursion so that a body nested
 * 100,000 levels deep costs one loop and no stack. Null when the input is clean.
 */
export function findBadInput(root: unknown, rootName: string, maxDepth = MAX_INPUT_DEPTH): BadInput | null {
  const stack: Frame[] = [{ value: root, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { value } = frame;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return { path: pathOf(frame, rootName), message: `${pathOf(frame, rootName)} ${problem}` };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) {
      return {
        path: pathOf(frame, rootName),
        message: `${pathOf(frame, rootName)} is nested deeper than ${maxDepth} levels`,
      };
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: frame, depth });
      continue;
    }
    const keys = Object.keys(value);
    for (const key of keys) {
      const problem = textProblem(key);
      if (problem) {
        const path = pathOf({ value: undefined, key, parent: frame, depth }, rootName);
        return { path, message: `the property name ${path} ${problem}` };
      }
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      stack.push({ value: (value as Record<string, unknown>)[keys[i]], key: keys[i], parent: frame, depth });
    }
  }
  return null;
}
