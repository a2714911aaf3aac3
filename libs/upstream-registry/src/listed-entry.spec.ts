import { describe, expect, it } from 'vitest';
import { entryHash, normalizeListedEntry } from './listed-entry';

describe('normalizeListedEntry', () => {
  it('should keep a resource and drop its invalid fields with a warning', () => {
    const { entry, warnings } = normalizeListedEntry(
      'RESOURCE',
      { uri: 'test://a', name: 'a', title: null, mimeType: 'text/plain', _meta: { x: 1 } },
      0,
    );
    expect(entry).toEqual({
      kind: 'RESOURCE',
      key: 'test://a',
      definition: { uri: 'test://a', name: 'a', mimeType: 'text/plain' },
    });
    expect(warnings).toEqual(['resources test://a: title is invalid: field dropped']);
  });

  it('should drop an entry without its key or name', () => {
    expect(normalizeListedEntry('RESOURCE_TEMPLATE', { name: 't' }, 3)).toEqual({
      entry: null,
      warnings: ['resourceTemplates[3] has no usable uriTemplate: dropped'],
    });
    expect(normalizeListedEntry('PROMPT', { name: '' }, 1).entry).toBeNull();
    expect(normalizeListedEntry('PROMPT', 'oops', 2).entry).toBeNull();
  });

  it('should hash definitions whatever their key order', () => {
    expect(entryHash({ a: 1, b: [1, 2] })).toBe(entryHash({ b: [1, 2], a: 1 }));
  });
});
