import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { FieldValidationException } from '../errors/field-validation.exception';
import { textProblem } from './input-text';
import { validationExceptionFactory } from './validation-exception.factory';

type Class = new (...args: never[]) => unknown;

const PLAIN_TYPES: unknown[] = [String, Number, Boolean, Object, Array, Date, BigInt, Symbol];

interface PropertyFacts {
  /** The OpenAPI schema says `nullable: true`: null is a value of this field. */
  nullable: boolean;
  /** The DTO class of a nested object (or of an array's items), if it is one. */
  nested: Class | null;
}

function isDtoClass(t: unknown): t is Class {
  return (
    typeof t === 'function' &&
    !PLAIN_TYPES.includes(t) &&
    t.prototype !== undefined &&
    declaredProperties(t as Class).size > 0
  );
}

const declaredCache = new WeakMap<Class, Set<string>>();

/** The properties a DTO declares, to OpenAPI or to class-validator. */
function declaredProperties(cls: Class): Set<string> {
  let names = declaredCache.get(cls);
  if (!names) {
    names = new Set<string>();
    const swagger: unknown = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, cls.prototype);
    if (Array.isArray(swagger)) for (const n of swagger) names.add(String(n).replace(/^:/, ''));
    for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) names.add(m.propertyName);
    declaredCache.set(cls, names);
  }
  return names;
}

function propertyFacts(cls: Class, key: string): PropertyFacts {
  const meta = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, cls.prototype, key) as
    { nullable?: boolean; type?: unknown } | undefined;
  let type: unknown = meta?.type ?? Reflect.getMetadata('design:type', cls.prototype, key);
  if (Array.isArray(type)) type = type[0];
  // `type: () => Dto` (a lazy reference) has no prototype; a class has one.
  if (typeof type === 'function' && type.prototype === undefined) type = (type as () => unknown)();
  if (Array.isArray(type)) type = type[0];
  return { nullable: meta?.nullable === true, nested: isDtoClass(type) ? type : null };
}

/**
 * The first declared field of a body (or of a nested DTO in it) that holds an explicit `null`
 * its OpenAPI schema does not allow. class-validator's `@IsOptional()` lets null through as if
 * absent, and the services then hand it to Prisma (a 500): here an explicit null is a 400 naming
 * the field, except where the schema says `nullable` (there null means "none", as omitting does).
 */
export function findRefusedNull(body: unknown, dto: Class): string | null {
  const stack: { value: unknown; cls: Class; path: string }[] = [{ value: body, cls: dto, path: '' }];
  while (stack.length > 0) {
    const { value, cls, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, cls, path: `${path}[${i}]` }));
      continue;
    }
    const declared = declaredProperties(cls);
    for (const [key, v] of Object.entries(value)) {
      // Undeclared properties are left to `forbidNonWhitelisted`, which names them.
      if (!declared.has(key)) continue;
      const field = path ? `${path}.${key}` : key;
      const facts = propertyFacts(cls, key);
      if (v === null && !facts.nullable) return field;
      if (v !== null && facts.nested) stack.push({ value: v, cls: facts.nested, path: field });
    }
  }
  return null;
}

/**
 * The global ValidationPipe (whitelist, named 400s), plus what class-validator lets through:
 * explicit nulls where the schema allows none, and path parameters Postgres could not store.
 */
@Injectable()
export class AdminValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
      exceptionFactory: validationExceptionFactory,
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && isDtoClass(metadata.metatype)) {
      const field = findRefusedNull(value, metadata.metatype);
      if (field) throw new FieldValidationException(field, [`${field} must not be null; omit it to leave it unset`]);
    }
    if (metadata.type === 'param' && typeof value === 'string') {
      const problem = textProblem(value);
      if (problem)
        throw new FieldValidationException(metadata.data ?? 'path', [`${metadata.data ?? 'path'} ${problem}`]);
    }
    return super.transform(value, metadata);
  }
}
