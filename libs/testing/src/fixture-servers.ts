import path from 'node:path';
import { REPO_ROOT } from './test-database';

/** The reference MCP server from npm, run over stdio as an upstream. */
export const SERVER_EVERYTHING = {
  command: process.execPath,
  args: [path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};
