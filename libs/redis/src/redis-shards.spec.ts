import { describe, expect, it } from 'vitest';
import { orgKeyOf, shardKey, shardOf } from './redis-shards';

describe('orgKeyOf', () => {
  it("should build every organisation's key in its shard, under each prefix, however often it is asked", () => {
    const orgs = ['org-a', 'cm3x9k2l0000abcd1234efgh', '', 'org:with:colons'];
    for (let round = 0; round < 3; round++)
      for (const prefix of ['tg', '{tg}', 'tgbench:1f2e']) {
        for (const orgId of orgs) {
          expect(orgKeyOf(prefix, orgId)).toBe(`${prefix}:{s${shardOf(orgId)}}:org:${orgId}`);
          expect(orgKeyOf(prefix, orgId, 'budget', 'b1', '1700000000000')).toBe(
            shardKey(prefix, shardOf(orgId), 'org', orgId, 'budget', 'b1', '1700000000000'),
          );
        }
      }
  });
});
