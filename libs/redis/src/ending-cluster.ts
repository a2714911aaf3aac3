import { Callback, Cluster, ClusterNode, ClusterOptions, Command } from 'ioredis';

/** The options of a cluster that answers in RESP2's reply shapes (ours, and ioredis' default). */
type LegacyClusterOptions = ClusterOptions & { redisOptions?: { replyMapping?: 'legacy' } };

/**
 * An ioredis `Cluster` that stays closed once closed. ioredis 6 leaves a cluster it was told to
 * close in a state where a command waits forever:
 * - after `disconnect()` of a connected cluster its status ends at `close` (a node's late `drain`
 *   comes after `end`), so a command sent then (our outbox drain acknowledging a batch it had just
 *   read) goes to the offline queue, which nothing flushes again;
 * - a cluster with no node connections (waiting to reconnect after every node was lost, e.g. a slot
 *   refresh that timed out on a loaded machine) has none left to close, so `disconnect()` never
 *   emits `end` (BullMQ awaits it when it closes a worker's blocking connection) and its queued
 *   commands wait forever.
 * Either left a worker that never finished shutting down on cluster Redis (seen in the suite). Here a
 * command after `disconnect()` or `quit()` fails at once (until `connect()` again, as BullMQ does
 * with its blocking connections), and a cluster without nodes ends at once. Its duplicates (BullMQ's
 * blocking connections, the outbox drain's) are of this class too.
 */
export class EndingCluster extends Cluster {
  /** Told to close (and not connected again since). */
  private closed = false;

  constructor(startupNodes: ClusterNode[], options: ClusterOptions) {
    super(startupNodes, options as LegacyClusterOptions);
  }

  override connect(): Promise<void> {
    this.closed = false;
    return super.connect();
  }

  override disconnect(reconnect = false): void {
    if (!reconnect) this.closed = true;
    super.disconnect(reconnect);
    if (!reconnect && this.status !== 'end' && this.nodes().length === 0) {
      // What ioredis does itself for a cluster that never connected: `end`, and the offline queue
      // rejected ("None of startup nodes is available").
      (this as unknown as { handleCloseEvent(): void }).handleCloseEvent();
    }
  }

  override quit(callback?: Callback<'OK'>): Promise<'OK'> {
    this.closed = true;
    return super.quit(callback);
  }

  override sendCommand(command: Command, stream?: Parameters<Cluster['sendCommand']>[1], node?: unknown): unknown {
    if (!this.closed) return super.sendCommand(command, stream, node);
    command.reject(new Error('Connection is closed.'));
    return command.promise;
  }

  override duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    // Cluster.duplicate, building this class: the same seeds and options unless overridden.
    const own = (this as unknown as { startupNodes: ClusterNode[] }).startupNodes;
    const options = { ...this.options, ...overrideOptions };
    if (this.options.redisOptions && overrideOptions.redisOptions) {
      options.redisOptions = { ...this.options.redisOptions, ...overrideOptions.redisOptions };
    }
    const startupNodes = overrideStartupNodes.length > 0 ? overrideStartupNodes : own.slice(0);
    return new EndingCluster(startupNodes, options);
  }
}
