import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** Why a call's arguments do not fit the pinned input schema, naming the parameter. */
export interface ArgumentSchemaViolation {
  /** The argument at fault as a path (`region`, `filter.limit`, `items[2]`), or `""` for the whole object. */
  parameter: string;
  /** What is wrong with it, in the validator's words. */
  problem: string;
  /** The argument is not in the approved definition (a newer definition awaiting review may add it). */
  notInApprovedDefinition: boolean;
}

interface CompiledSchema {
  validate: ValidateFunction | null;
  /** Top-level parameters the schema names, when it allows no others; null when any may come. */
  closedProperties: Set<string> | null;
}

// One validator instance: formats checked, unknown keywords tolerated (upstream schemas are sloppy).
const AJV = new Ajv({ strict: false, allErrors: false, validateSchema: false });
addFormats(AJV);

/** Compiled validators by the pinned definition's hash; a catalog reload reuses them. */
const COMPILED = new Map<string, CompiledSchema>();
const MAX_COMPILED = 10_000;

/**
 * Checks `args` against a tool's pinned (approved) input schema. The pinned definition is the
 * contract: an argument the schema does not name is refused when the schema names its parameters
 * and does not itself allow others, so a parameter only a pending revision has never reaches the
 * upstream. A schema the validator cannot compile checks only that rule (the upstream validates too).
 */
export function checkArgumentSchema(
  definitionHash: string,
  inputSchema: object,
  args: Record<string, unknown> | undefined,
): ArgumentSchemaViolation | null {
  const compiled = compiledFor(definitionHash, inputSchema);
  const value = args ?? {};
  if (compiled.closedProperties) {
    for (const name in value) {
      if (!compiled.closedProperties.has(name))
        return {
          parameter: name,
          problem: 'is not a parameter of the approved definition',
          notInApprovedDefinition: true,
        };
    }
  }
  if (!compiled.validate || compiled.validate(value)) return null;
  return violationOf(compiled.validate.errors?.[0]);
}

function compiledFor(hash: string, inputSchema: object): CompiledSchema {
  let compiled = COMPILED.get(hash);
  if (compiled) return compiled;
  compiled = { validate: compile(inputSchema), closedProperties: closedPropertiesOf(inputSchema) };
  if (COMPILED.size >= MAX_COMPILED) COMPILED.clear();
  COMPILED.set(hash, compiled);
  return compiled;
}

function compile(inputSchema: object): ValidateFunction | null {
  // `$schema` naming a draft this Ajv does not load would fail the compile; the keywords are the same.
  const { $schema: _ignored, ...schema } = inputSchema as Record<string, unknown>;
  try {
    return AJV.compile(schema);
  } catch {
    return null;
  }
}

function closedPropertiesOf(inputSchema: object): Set<string> | null {
  const s = inputSchema as { properties?: unknown; additionalProperties?: unknown; patternProperties?: unknown };
  if (typeof s.properties !== 'object' || s.properties === null) return null;
  // The schema itself lets other parameters in: then they are part of the contract.
  if ((s.additionalProperties !== undefined && s.additionalProperties !== false) || s.patternProperties !== undefined)
    return null;
  return new Set(Object.keys(s.properties));
}

function violationOf(error: ErrorObject | undefined): ArgumentSchemaViolation {
  if (!error) return { parameter: '', problem: 'does not match the input schema', notInApprovedDefinition: false };
  let parameter = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : p.replace(/~1/g, '/').replace(/~0/g, '~')))
    .reduce((path, p) => (p.startsWith('[') || path === '' ? path + p : `${path}.${p}`), '');
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const child = params.missingProperty ?? params.additionalProperty;
  if (child !== undefined) parameter = parameter ? `${parameter}.${child}` : child;
  const problem =
    params.missingProperty !== undefined
      ? 'is required'
      : params.additionalProperty !== undefined
        ? 'is not a parameter of the approved definition'
        : (error.message ?? 'is invalid');
  return {
    parameter,
    problem,
    notInApprovedDefinition: params.additionalProperty !== undefined && error.instancePath === '',
  };
}
