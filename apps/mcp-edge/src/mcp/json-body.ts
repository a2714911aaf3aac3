import type { IncomingMessage } from 'node:http';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export type JsonBody = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/** Reads and parses a JSON-RPC request body; malformed input becomes a JSON-RPC error, not a crash. */
export async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 413, code: -32600, message: `Request body larger than ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (err) {
    return { ok: false, status: 400, code: -32700, message: `Parse error: ${(err as Error).message}` };
  }
}
