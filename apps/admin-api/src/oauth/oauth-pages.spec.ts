import { describe, expect, it } from 'vitest';
import { consentPage, signInPage } from './oauth-pages';

/** Every `<label for=X>` of a page and the tags carrying `id="X"`: a label must name exactly one field. */
function labelTargets(html: string): { label: string; tags: string[] }[] {
  return [...html.matchAll(/<label for="([^"]+)">([^<]*)<\/label>/g)].map(([, id, label]) => ({
    label,
    tags: [...html.matchAll(new RegExp(`<(\\w+)[^>]*\\sid="${id}"`, 'g'))].map((m) => m[1]),
  }));
}

describe('OAuth sign-in pages', () => {
  it('should give every label exactly one field, so screen readers name each input (no form sharing its id)', () => {
    const pages = [
      signInPage('/oauth/interaction/x', 'csrf', { clientName: 'Claude', email: 'ada@acme.test' }),
      consentPage('/oauth/interaction/x', 'csrf', {
        clientName: 'Claude',
        clientId: 'c1',
        redirectHost: 'localhost',
        email: 'ada@acme.test',
        teams: [
          { id: 't1', name: 'web' },
          { id: 't2', name: 'data' },
        ],
      }),
    ];
    const targets = pages.flatMap(labelTargets);
    expect(targets.map((t) => t.label)).toEqual(expect.arrayContaining(['Work email', 'Sign-in code']));
    for (const t of targets) expect(t, t.label).toMatchObject({ tags: [expect.stringMatching(/^(input|select)$/)] });
    for (const t of targets) expect(t.tags, t.label).toHaveLength(1);
  });
});
