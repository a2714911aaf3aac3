import { describe, expect, it } from 'vitest';
import { diffToolDefinitions } from './tool-diff';

const hashes = { pinnedHash: 'a', definitionHash: 'b' };

describe('diffToolDefinitions', () => {
  it('should list added, removed and changed properties and the description change when a schema changes', () => {
    const pinned = {
      name: 't',
      description: 'Old.',
      inputSchema: {
        type: 'object' as const,
        properties: { a: { type: 'string' }, b: { type: 'number' } },
        required: ['a'],
      },
    };
    const latest = {
      name: 't',
      description: 'New.',
      inputSchema: {
        type: 'object' as const,
        properties: { a: { type: 'string', enum: ['x'] }, c: { type: 'boolean' } },
        required: ['a', 'c'],
      },
    };
    expect(diffToolDefinitions(pinned, latest, hashes)).toEqual({
      pinnedHash: 'a',
      definitionHash: 'b',
      title: null,
      description: { before: 'Old.', after: 'New.' },
      inputSchema: {
        added: ['c'],
        removed: ['b'],
        changed: [{ name: 'a', before: { type: 'string' }, after: { type: 'string', enum: ['x'] } }],
        required: { before: ['a'], after: ['a', 'c'] },
      },
      otherChanges: [],
      changed: true,
    });
  });

  it('should show everything as added when the tool was never approved', () => {
    const diff = diffToolDefinitions(
      null,
      { name: 't', description: 'D.', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
      { pinnedHash: null, definitionHash: 'b' },
    );
    expect(diff.description).toEqual({ before: null, after: 'D.' });
    expect(diff.inputSchema.added).toEqual(['q']);
    expect(diff.otherChanges).toEqual(['inputSchema']);
  });

  it('should report annotation changes and no property change when only key order differs', () => {
    const pinned = {
      name: 't',
      inputSchema: { type: 'object' as const, properties: { a: { type: 'string', description: 'x' } } },
      annotations: { readOnlyHint: true },
    };
    const latest = {
      name: 't',
      inputSchema: { type: 'object' as const, properties: { a: { description: 'x', type: 'string' } } },
      annotations: { readOnlyHint: false },
    };
    const diff = diffToolDefinitions(pinned, latest, hashes);
    expect(diff.inputSchema).toEqual({ added: [], removed: [], changed: [], required: null });
    expect(diff.otherChanges).toEqual(['annotations']);
  });
});
