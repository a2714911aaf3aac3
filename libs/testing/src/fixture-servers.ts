import path from 'node:path';
import { REPO_ROOT } from './test-database';

/** The reference MCP servers from npm, run over stdio as upstreams. */
export const SERVER_EVERYTHING = {
  command: process.execPath,
  args: [path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};

export const SERVER_MEMORY = {
  command: process.execPath,
  args: [path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js')],
};
