/**
 * `npm run demo:agent`: an MCP SDK agent that connects to the edge with the demo key, lists its
 * tools, reads a resource and gets a prompt, and calls a priced tool until its budget stops it,
 * printing what it sees at each step.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatMicros } from '@tollgate/kernel';

const ROOT = path.resolve(__dirname, '../../..');
const MAX_CALLS = 1000;

function money(micros: number | null | undefined): string {
  return micros === null || micros === undefined ? 'n/a' : formatMicros(BigInt(micros));
}

async function main(): Promise<void> {
  const demo = JSON.parse(
    await readFile(path.join(ROOT, '.tollgate/demo.json'), 'utf8').catch(() => {
      throw new Error('No .tollgate/demo.json: start the platform first with `npm start`.');
    }),
  ) as { edgeUrl: string; demoKey: string };

  const client = new Client({ name: 'tollgate-demo-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${demo.edgeUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${demo.demoKey}` } },
    }),
  );
  console.log(`connected to ${demo.edgeUrl}/mcp as ${demo.demoKey.slice(0, 10)}...`);

  const { tools } = await client.listTools();
  console.log(`\n${tools.length} tools visible to this key:`);
  for (const t of tools) {
    const price = t._meta?.['tollgate/price'] as { perCallMicros: number } | undefined;
    console.log(`  ${t.name.padEnd(44)} ${price ? `${money(price.perCallMicros)} per call` : 'free (gateway tool)'}`);
  }

  const { resources } = await client.listResources();
  const { prompts } = await client.listPrompts();
  console.log(`\n${resources.length} resources and ${prompts.length} prompts visible to this key.`);
  if (resources.length > 0) {
    const read = await client.readResource({ uri: resources[0].uri });
    const first = read.contents[0];
    const call = read._meta?.['tollgate/call'] as { costMicros: number } | undefined;
    const budget = read._meta?.['tollgate/budget'] as { remainingMicros: number | null } | undefined;
    const preview =
      first && 'text' in first
        ? first.text.slice(0, 60).replace(/\s+/g, ' ')
        : `${first?.mimeType ?? 'binary'} content`;
    console.log(
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
    console.log(
      `getting prompt ${simple.name}: ${got.messages.length} message(s), "${text.slice(0, 60)}"  cost ${money(call?.costMicros)}`,
    );
  }

  const denied = (await client.callTool({ name: 'everything__get-env', arguments: {} })) as CallToolResult;
  console.log(
    `\ncalling a tool the policy denies (everything__get-env): ${JSON.stringify(denied._meta?.['tollgate/error'])}`,
  );

  console.log('\ncalling everything__echo until the budget stops it:');
  for (let i = 1; i <= MAX_CALLS; i++) {
    const res = (await client.callTool({
      name: 'everything__echo',
      arguments: { message: `call ${i}` },
    })) as CallToolResult;
    if (res.isError) {
      const err = res._meta?.['tollgate/error'] as Record<string, unknown>;
      console.log(`  #${i} refused: ${err.code} - ${err.message}`);
      console.log(
        `      limit ${money(err.limitMicros as number)}, spent ${money(err.spentMicros as number)}, this call needs ${money(err.requestedMicros as number)}, resets at ${err.resetsAt}`,
      );
      console.log(`      hint: ${err.hint}`);
      break;
    }
    const call = res._meta?.['tollgate/call'] as { costMicros: number };
    const budget = res._meta?.['tollgate/budget'] as { remainingMicros: number | null };
    const text = res.content.find((c) => c.type === 'text');
    console.log(
      `  #${i} ${text && 'text' in text ? text.text : ''}  cost ${money(call.costMicros)}  remaining ${money(budget.remainingMicros)}`,
    );
  }
  await client.close();
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
