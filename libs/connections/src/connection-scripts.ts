import { luaScript, readLuaFile, replyInt, ScriptCodec } from '@tollgate/redis';

/** release-lock.lua: deletes a lock only if `holder` still holds it; true when it did. */
export const RELEASE_LOCK: ScriptCodec<{ lockKey: string; holder: string }, boolean> = {
  script: luaScript('release-lock', readLuaFile(__dirname, 'release-lock.lua')),
  encode: (i) => ({ keys: [i.lockKey], args: [i.holder] }),
  decode: (reply) => replyInt(reply) === 1,
};
