import { countJsonTokens, countTokens } from '@tollgate/tokens';
import { describe, expect, it } from 'vitest';
import { DisclosureCatalog } from './disclosure-catalog';
import { typedStub } from './tool-summary';
import { profileTool } from './tool-profile';

const tool = {
  name: 'github__create_issue',
  description: 'Create a new issue in a GitHub repository. Needs push access.',
  inputSchema: {
    type: 'object',
    properties: { owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } },
    required: ['owner', 'repo', 'title'],
  },
};

describe('profileTool', () => {
  it('should count the T2 entry exactly as search renders it when it has no price or tier', () => {
    const profile = profileTool({ ...tool, schemaTokens: 80 });
    const catalog = new DisclosureCatalog([{ ...tool, namespace: 'github', schemaTokens: 80 }]);
    const entry = JSON.parse(catalog.searchTools({ query: 'issue' }).json).tools[0];
    expect(profile.summary).toBe('Create a new issue in a GitHub repository.');
    expect(profile.summaryTokens).toBe(countJsonTokens(entry));
    expect(profile.category).toBe(catalog.categoryOf('github__create_issue'));
  });

  it('should count the code-mode stub of the tool', () => {
    expect(profileTool({ ...tool, schemaTokens: 80 }).stubTokens).toBe(countTokens(typedStub(tool)));
  });
});
