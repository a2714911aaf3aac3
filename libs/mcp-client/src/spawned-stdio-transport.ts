import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The SDK client's transport over a stdio process already spawned and spoken to (asked its
 * `server/discover`): `start` spawns nothing, and a late answer to the earlier request is dropped
 * (its id is a string; the SDK client's are numbers). Closing it ends the process as the SDK's
 * transport does.
 */
export class SpawnedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly spawned: StdioClientTransport) {}

  async start(): Promise<void> {
    this.spawned.onmessage = (message) => {
      if (!('method' in message) && typeof (message as { id?: unknown }).id === 'string') return;
      this.onmessage?.(message);
    };
    this.spawned.onerror = (error) => this.onerror?.(error);
    this.spawned.onclose = () => this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.spawned.send(message);
  }

  close(): Promise<void> {
    return this.spawned.close();
  }
}
