import { ValidateBy, ValidationOptions, buildMessage } from 'class-validator';

export const MAX_KEY_TAGS = 20;
const TAG = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,39}$/;
export const MAX_KEY_METADATA_BYTES = 4096;
const MAX_METADATA_DEPTH = 4;

/** Up to 20 distinct tags of 1-40 characters: letters, digits and . _ : / - (not leading). */
export function isKeyTagList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_KEY_TAGS &&
    value.every((t) => typeof t === 'string' && TAG.test(t)) &&
    new Set(value).size === value.length
  );
}

/** A JSON object (not an array) of at most 4 KiB serialised and 4 levels deep. */
export function isKeyMetadata(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const depth = (v: unknown, d: number): boolean =>
    v !== null && typeof v === 'object'
      ? d < MAX_METADATA_DEPTH && Object.values(v).every((x) => depth(x, d + 1))
      : true;
  return depth(value, 0) && Buffer.byteLength(JSON.stringify(value)) <= MAX_KEY_METADATA_BYTES;
}

export function IsKeyTagList(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isKeyTagList',
      validator: {
        validate: (value) => isKeyTagList(value),
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be a list of at most ${MAX_KEY_TAGS} distinct tags of 1-40 letters, digits and . _ : / - (starting with a letter or digit)`,
          options,
        ),
      },
    },
    options,
  );
}

export function IsKeyMetadata(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isKeyMetadata',
      validator: {
        validate: (value) => isKeyMetadata(value),
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be a JSON object of at most ${MAX_KEY_METADATA_BYTES} bytes and ${MAX_METADATA_DEPTH} levels`,
          options,
        ),
      },
    },
    options,
  );
}

export function IsKeyTag(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isKeyTag',
      validator: {
        validate: (value) => typeof value === 'string' && TAG.test(value),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be a tag of 1-40 letters, digits and . _ : / -`,
          options,
        ),
      },
    },
    options,
  );
}
