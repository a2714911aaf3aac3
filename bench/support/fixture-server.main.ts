/**
 * The benchmarks' upstream, in its own process: an MCP server over Streamable HTTP answered by
 * hand (stateless, one JSON body per request), so the baseline costs what the cheapest HTTP
 * responder costs, not an SDK server and transport per request. It serves the standard fixture
 * tools; `ping` (the overhead benchmark's call) is answered from a prepared body. Prints its URL.
 * BENCH_FIXTURE=sdk runs the test fixture instead (an SDK server and transport per request, about
 * 0.5-0.75 ms of CPU per call: the upstream earlier figures were measured against).
 */
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { STANDARD_FIXTURE_TOOLS, startFixtureServer } from '../../test/fixtures/http-fixture-server';

const TOOLS = new Map(STANDARD_FIXTURE_TOOLS.map((t) => [t.definition.name, t]));
const TOOLS_LIST = JSON.stringify({ tools: STANDARD_FIXTURE_TOOLS.map((t) => t.definition) });
const PONG = '{"content":[{"type":"text","text":"pong"}]}';
const LATEST_PROTOCOL = '2025-06-18';

interface Message {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: { name?: string; arguments?: Record<string, unknown>; protocolVersion?: string };
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const answer = (id: Message['id'], result: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
const failure = (id: Message['id'], code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });

async function respond(msg: Message): Promise<string> {
  switch (msg.method) {
    case 'tools/call': {
      const name = msg.params?.name;
      if (name === 'ping') return answer(msg.id, PONG);
      const tool = name === undefined ? undefined : TOOLS.get(name);
      if (!tool) return failure(msg.id, -32602, `Tool ${name} not found`);
      return answer(msg.id, JSON.stringify(await tool.run(msg.params?.arguments ?? {})));
    }
    case 'initialize':
      return answer(
        msg.id,
        JSON.stringify({
          protocolVersion: msg.params?.protocolVersion ?? LATEST_PROTOCOL,
          capabilities: { tools: {} },
          serverInfo: { name: 'bench-fixture', version: '1.0.0' },
        }),
      );
    case 'tools/list':
      return answer(msg.id, TOOLS_LIST);
    case 'ping':
      return answer(msg.id, '{}');
    default:
      return failure(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  // No server-initiated stream and no sessions: a GET stream or a DELETE is not supported.
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST', 'Content-Length': 0 });
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let msg: Message;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Message;
    } catch {
      return send(res, 400, failure(null, -32700, 'Parse error'));
    }
    // A notification (no id) is accepted with no body.
    if (msg.id === undefined) {
      res.writeHead(202, { 'Content-Length': 0 });
      res.end();
      return;
    }
    respond(msg).then(
      (body) => send(res, 200, body),
      (err: Error) => send(res, 200, failure(msg.id, -32603, err.message)),
    );
  });
}

if (process.env.BENCH_FIXTURE === 'sdk') {
  void startFixtureServer(STANDARD_FIXTURE_TOOLS, { recordCalls: false }).then((f) =>
    process.stdout.write(`${JSON.stringify({ url: f.url })}\n`),
  );
} else {
  const server = createServer({ keepAliveTimeout: 60_000 }, handle);
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(
      `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` })}\n`,
    );
  });
}
