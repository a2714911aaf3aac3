import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { plainTextResult } from './streamable-http-tool-caller';

describe('plainTextResult (the hand check before CallToolResultSchema)', () => {
  it('should take text-only results exactly as the schema reads them', () => {
    const results = [
      { content: [{ type: 'text', text: 'pong' }] },
      { content: [] },
      {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: '' },
        ],
        isError: true,
      },
      { content: [{ type: 'text', text: 'x' }], isError: false, extra: { kept: 1 } },
    ];
    for (const r of results) {
      expect(plainTextResult(structuredClone(r))).toEqual(CallToolResultSchema.parse(structuredClone(r)));
    }
  });

  it('should leave everything else to the schema', () => {
    const others = [
      null,
      'pong',
      [],
      {},
      { content: 'pong' },
      { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] },
      { content: [{ type: 'text', text: 'a', annotations: { priority: 1 } }] },
      { content: [{ type: 'text', text: 'a', unknownKey: 1 }] },
      { content: [{ type: 'text', text: 1 }] },
      { content: [{ type: 'text', text: 'a' }], _meta: { progressToken: 1 } },
      { content: [{ type: 'text', text: 'a' }], structuredContent: { a: 1 } },
      { content: [{ type: 'text', text: 'a' }], isError: 'yes' },
    ];
    for (const r of others) expect(plainTextResult(r)).toBeNull();
  });
});
