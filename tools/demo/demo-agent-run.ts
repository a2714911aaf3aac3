/**
 * The demo agent (`npm run demo:agent`): an MCP SDK agent that connects to the edge with the demo
 * key, lists its tools, reads a resource and gets a prompt, calls the free tool, and calls a
 * priced tool until its budget stops it, printing what it sees at each step.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatMicros } from '@tollgate/kernel';
import { DEMO_FREE_TOOL } from '../start/demo-seed';

const MAX_CALLS = 1000;

function money(micros: number | null | undefined): string {
  return micros === null || micros === undefined ? 'n/a' : formatMicros(BigInt(micros));
}

export interface DemoAgentOptions {
  edgeUrl: string;
  demoKey: string;
  print: (line: string) => void;
}

/** Thrown when the edge does not answer at all: the platform is not running. */
export class PlatformNotRunningError extends Error {}

export async function runDemoAgent({ edgeUrl, demoKey, print }: DemoAgentOptions): Promise<void> {
  // A stopped platform: say what to run rather than the SDK's "fetch failed".
  await fetch(`${edgeUrl}/healthz`).catch((err: Error) => {
    throw new PlatformNotRunningError(
      `The Tollgate edge at ${edgeUrl} does not answer (${(err.cause as Error | undefined)?.message ?? err.message}). ` +
        'Start the platform with `npm start` in another terminal, wait for its banner, then run `npm run demo:agent` again.',
    );
  });
  const client = new Client({ name: 'tollgate-demo-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${demoKey}` } },
    }),
  );
  print(`connected to ${edgeUrl}/mcp as ${demoKey.slice(0, 10)}...`);

  const { tools } = await client.listTools();
  print(`\n${tools.length} tools visible to this key:`);
  for (const t of tools) {
    // Every upstream tool carries its price; an unpriced one (no rule) shows zeros.
    const price = t._meta?.['tollgate/price'] as { perCallMicros: number; perOutputTokenMicros: number } | undefined;
    const priced = price && (price.perCallMicros > 0 || price.perOutputTokenMicros > 0);
    const label = priced
      ? `${money(price.perCallMicros)} per call${price.perOutputTokenMicros > 0 ? ` + ${money(price.perOutputTokenMicros)} per output token` : ''}`
      : price
        ? 'free'
        : 'free (gateway tool)';
    print(`  ${t.name.padEnd(44)} ${label}`);
  }

  const { resources } = await client.listResources();
  const { prompts } = await client.listPrompts();
  print(`\n${resources.length} resources and ${prompts.length} prompts visible to this key.`);
  if (resources.length > 0) {
    const read = await client.readResource({ uri: resources[0].uri });
    const first = read.contents[0];
    const call = read._meta?.['tollgate/call'] as { costMicros: number } | undefined;
    const budget = read._meta?.['tollgate/budget'] as { remainingMicros: number | null } | undefined;
    const preview =
      first && 'text' in first
        ? first.text.slice(0, 60).replace(/\s+/g, ' ')
        : `${first?.mimeType ?? 'binary'} content`;
    print(
      `reading resource ${resources[0].uri}: "${preview}..."  cost ${money(call?.costMicros)}  remaining ${money(budget?.remainingMicros)}`,
    );
  }
  const simple = prompts.find((p) => !p.arguments?.some((a) => a.required));
  if (simple) {
    const got = await client.getPrompt({ name: simple.name });
    const text = got.messages
      .map((m) => (m.content.type === 'text' ? m.content.text : `[${m.content.type}]`))
      .join(' ');
    const call = got._meta?.['tollgate/call'] as { costMicros: number } | undefined;
    print(
      `getting prompt ${simple.name}: ${got.messages.length} message(s), "${text.slice(0, 60)}"  cost ${money(call?.costMicros)}`,
    );
  }

  const denied = (await client.callTool({ name: 'everything__get-env', arguments: {} })) as CallToolResult;
  print(
    `\ncalling a tool the policy denies (everything__get-env): ${JSON.stringify(denied._meta?.['tollgate/error'])}`,
  );

  const free = (await client.callTool({ name: DEMO_FREE_TOOL, arguments: {} })) as CallToolResult;
  const freeCall = free._meta?.['tollgate/call'] as { costMicros: number } | undefined;
  const freeBudget = free._meta?.['tollgate/budget'] as { remainingMicros: number | null } | undefined;
  print(
    free.isError
      ? `\ncalling the free tool ${DEMO_FREE_TOOL}: refused: ${JSON.stringify(free._meta?.['tollgate/error'])}`
      : `\ncalling the free tool ${DEMO_FREE_TOOL}: answered (${free.content.length} content item(s))  cost ${money(freeCall?.costMicros)}  remaining ${money(freeBudget?.remainingMicros)}`,
  );

  print('\ncalling everything__echo until the budget stops it:');
  for (let i = 1; i <= MAX_CALLS; i++) {
    const res = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: `call ${i}` },
    })) as CallToolResult;
    if (res.isError) {
      const err = res._meta?.['tollgate/error'] as Record<string, unknown>;
      print(`  #${i} refused: ${err.code} - ${err.message}`);
      print(
        `      limit ${money(err.limitMicros as number)}, spent ${money(err.spentMicros as number)}, this call needs ${money(err.requestedMicros as number)}, resets at ${err.resetsAt}`,
      );
      print(`      hint: ${err.hint}`);
      break;
    }
    const call = res._meta?.['tollgate/call'] as { costMicros: number };
    const budget = res._meta?.['tollgate/budget'] as { remainingMicros: number | null };
    const text = res.content.find((c) => c.type === 'text');
    print(
      `  #${i} ${text && 'text' in text ? text.text : ''}  cost ${money(call.costMicros)}  remaining ${money(budget.remainingMicros)}`,
    );
  }
  await client.close();
}
