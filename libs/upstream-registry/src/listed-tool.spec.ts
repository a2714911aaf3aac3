import { describe, expect, it } from 'vitest';
import { normalizeListedTool } from './listed-tool';

const schema = { type: 'object', properties: { q: { type: 'string' } } };

describe('normalizeListedTool', () => {
  it('should keep a tool and drop only its null hints and null description when an upstream sends them', () => {
    const { tool, warnings } = normalizeListedTool(
      {
        name: 'npmVersions',
        description: null,
        inputSchema: schema,
        annotations: { title: 'Versions', readOnlyHint: true, destructiveHint: null, idempotentHint: true },
        vendorField: { anything: 1 },
      },
      0,
    );
    expect(tool).toEqual({
      name: 'npmVersions',
      inputSchema: schema,
      annotations: { title: 'Versions', readOnlyHint: true, idempotentHint: true },
    });
    expect(warnings).toEqual([
      'tool npmVersions: description is null: field dropped',
      'tool npmVersions: annotations.destructiveHint is null: field dropped',
    ]);
  });

  it('should keep a valid tool unchanged and warn about nothing when every field is valid', () => {
    const valid = {
      name: 'ok',
      title: 'OK',
      description: 'd',
      inputSchema: schema,
      annotations: { readOnlyHint: false },
    };
    expect(normalizeListedTool(valid, 0)).toEqual({ tool: valid, warnings: [] });
  });

  it('should drop the tool when it has no name or an input schema that is not an object schema', () => {
    expect(normalizeListedTool({ name: null, inputSchema: schema }, 3)).toEqual({
      tool: null,
      warnings: ['tools[3] has name null: tool dropped'],
    });
    expect(normalizeListedTool({ name: 'x', inputSchema: { type: 'string' } }, 0).tool).toBeNull();
    expect(normalizeListedTool('x', 1).warnings).toEqual(['tools[1] is the string "x", not a tool: dropped']);
  });

  it('should serve an open object schema with a warning when the input schema is missing', () => {
    const { tool, warnings } = normalizeListedTool({ name: 'bare' }, 0);
    expect(tool).toEqual({ name: 'bare', inputSchema: { type: 'object' } });
    expect(warnings).toHaveLength(1);
  });

  it('should drop annotations that are not an object and an output schema that is not an object schema', () => {
    const { tool, warnings } = normalizeListedTool(
      { name: 't', inputSchema: schema, annotations: 'yes', outputSchema: { type: 'array' } },
      0,
    );
    expect(tool).toEqual({ name: 't', inputSchema: schema });
    expect(warnings).toEqual([
      'tool t: outputSchema is an object: field dropped',
      'tool t: annotations is the string "yes": field dropped',
    ]);
  });
});
