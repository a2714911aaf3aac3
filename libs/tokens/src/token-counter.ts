import { Tiktoken, getEncoding } from 'js-tiktoken';

/** Encodings js-tiktoken bundles; o200k_base is the default (GPT-4o family, close to Claude's). */
export type TokenEncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base';

export const DEFAULT_TOKEN_ENCODING: TokenEncodingName = 'o200k_base';

const encoders = new Map<TokenEncodingName, Tiktoken>();

/** Loading an encoding takes ~0.4 s, so each process loads each encoding once. */
function encoder(name: TokenEncodingName): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    enc = getEncoding(name);
    encoders.set(name, enc);
  }
  return enc;
}

/** Integer token count of a text. */
export function countTokens(text: string, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  if (text.length === 0) return 0;
  return encoder(encoding).encode(text, 'all').length;
}

/** Token count of a value as the compact JSON an MCP client would put in context. */
export function countJsonTokens(value: unknown, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  return countTokens(JSON.stringify(value), encoding);
}

export function isTokenEncodingName(name: string): name is TokenEncodingName {
  return ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'].includes(name);
}
