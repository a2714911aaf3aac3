import { Cluster } from 'ioredis';
import { evalCached } from './lua-script';
import type { RedisClient } from './redis-client.factory';

/** How long and for how many replicas a write waits (REDIS_COMPLETION_WAIT_*); replicas 0: never. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
}

/**
 * Runs a Lua script as evalCached (lua-script.ts) does and, when `wait` asks for replicas, `WAIT
 * replicas timeout` in the same pipeline: on a cluster a pipeline goes to the one node its keys
 * live on, so the WAIT counts the replicas of the node that ran the script. Answers the script's
 * result and how many replicas acknowledged (null: no wait asked).
 */
export async function evalWithReplicaWait(
  client: RedisClient,
  script: { sha: string; source: string },
  keys: string[],
  args: (string | number)[],
  wait: ReplicaWait | null,
): Promise<{ result: unknown; replicas: number | null }> {
  if (!wait || wait.replicas <= 0) return { result: await evalCached(client, script, keys, args), replicas: null };
  const attempt = async (bySource: boolean) => {
    const pipeline = client.pipeline();
    if (bySource) pipeline.eval(script.source, keys.length, ...keys, ...args);
    else pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
    pipeline.wait(wait.replicas, wait.timeoutMs);
    const [[scriptErr, result], [waitErr, replicas]] = (await pipeline.exec()) as [Error | null, unknown][];
    return { scriptErr, result, waitErr, replicas: Number(replicas ?? 0) };
  };
  let bySource = false;
  let out = await attempt(bySource);
  for (
    let redirected = 0;
    redirected < 3 && out.scriptErr?.message.startsWith('MOVED ') && client instanceof Cluster;
    redirected++
  ) {
    // The slot moved (a failover): the script did not run. ioredis follows MOVED for a lone command
    // but retries a pipeline only when every reply is the same error, and the WAIT sent to the old
    // master (now a replica) answers another, so without this every later completion went to the
    // old node and failed (found by the money model: a master killed -9, back as a replica).
    await new Promise<void>((resolve, reject) => client.refreshSlotsCache((err) => (err ? reject(err) : resolve())));
    out = await attempt(bySource);
  }
  if (out.scriptErr?.message.includes('NOSCRIPT')) out = await attempt((bySource = true));
  if (out.scriptErr) throw out.scriptErr;
  // The script's writes are applied; a failed WAIT only means no replica is known to have them.
  return { result: out.result, replicas: out.waitErr ? 0 : out.replicas };
}
