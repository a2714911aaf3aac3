import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isUuid } from './uuid';

describe('isUuid', () => {
  it('should accept a UUID of either case and refuse anything Postgres would not take as one', () => {
    const id = randomUUID();
    expect(isUuid(id)).toBe(true);
    expect(isUuid(id.toUpperCase())).toBe(true);
    for (const bad of ['', 'org-1', id.slice(1), `${id}0`, id.replace(/-/g, ''), ` ${id}`, `{${id}}`, undefined, null])
      expect(isUuid(bad), String(bad)).toBe(false);
  });
});
