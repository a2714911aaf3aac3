import type { IncomingMessage } from 'node:http';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export type JsonBody = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/** Reads and parses a JSON-RPC request body; malformed input becomes a JSON-RPC error, not a crash. */
export function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  // Events rather than `for await`: the async iterator costs more than the parse of a small body.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      // Answer at once; the rest of the body is read and dropped, never held.
      req.off('data', onData).off('end', onEnd).resume();
      resolve({ ok: false, status: 413, code: -32600, message: `Request body larger than ${MAX_BODY_BYTES} bytes` });
    };
    const onEnd = () => {
      try {
        const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
        resolve({ ok: true, value: JSON.parse(text) });
      } catch (err) {
        resolve({ ok: false, status: 400, code: -32700, message: `Parse error: ${(err as Error).message}` });
      }
    };
    req.on('data', onData).on('end', onEnd);
    req.on('error', (err) => resolve({ ok: false, status: 400, code: -32700, message: `Parse error: ${err.message}` }));
  });
}
