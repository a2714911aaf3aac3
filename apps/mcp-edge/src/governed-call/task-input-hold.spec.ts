import { describe, expect, it } from 'vitest';
import { declares, requiredCapability } from '@tollgate/mcp-client';

describe('the capability a held input request needs', () => {
  it('should name elicitation for a form request and its url sub-capability for a URL request', () => {
    expect(requiredCapability({ method: 'elicitation/create', params: { mode: 'form' } })).toEqual({
      elicitation: {},
    });
    expect(requiredCapability({ method: 'elicitation/create', params: {} })).toEqual({ elicitation: {} });
    expect(requiredCapability({ method: 'elicitation/create', params: { mode: 'url' } })).toEqual({
      elicitation: { url: {} },
    });
    expect(requiredCapability({ method: 'sampling/createMessage' })).toEqual({ sampling: {} });
    expect(requiredCapability({ method: 'roots/list' })).toEqual({ roots: {} });
  });

  it('should let an agent answer only what it declared when it answers with tasks/update', () => {
    const url = { elicitation: { url: {} } };
    expect(declares({ elicitation: {} }, { elicitation: {} })).toBe(true);
    expect(declares({ elicitation: { form: {} } }, url)).toBe(false);
    expect(declares({ elicitation: { form: {}, url: {} } }, url)).toBe(true);
    expect(declares({ extensions: {} }, { elicitation: {} })).toBe(false);
    expect(declares({ sampling: {} }, { roots: {} })).toBe(false);
  });
});
