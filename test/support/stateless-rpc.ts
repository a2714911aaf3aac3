/** What a 2026-07-28 request answered: the HTTP status and the JSON-RPC result or error. */
export interface StatelessAnswer {
  status: number;
  result?: Record<string, any>;
  error?: { code: number; message: string; data?: any };
}

let lastId = 0;

/**
 * One 2026-07-28 request to an edge, as a client of that revision sends it: stateless, its headers
 * naming the method and the tool or task (Mcp-Name), its capabilities and client in `_meta`. An
 * SSE answer's last data line is the response; a JSON answer is the body.
 */
export async function statelessRpc(
  edgeUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown>,
  client: { name: string; capabilities: Record<string, unknown> },
): Promise<StatelessAnswer> {
  // What the edge checks Mcp-Name against: the tool or prompt, the resource, or the task.
  const named =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : method.startsWith('tasks/')
          ? params.taskId
          : undefined;
  const res = await fetch(`${edgeUrl}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(named !== undefined ? { 'mcp-name': String(named) } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++lastId,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': client.capabilities,
          'io.modelcontextprotocol/clientInfo': { name: client.name, version: '1' },
        },
      },
    }),
  });
  const text = await res.text();
  const body = res.headers.get('content-type')?.includes('text/event-stream')
    ? JSON.parse(
        text
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .pop()!
          .slice(6),
      )
    : JSON.parse(text);
  return { status: res.status, result: body.result, error: body.error };
}
