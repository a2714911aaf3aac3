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

// BPE cost grows with the square of a run without whitespace (a base64 blob, a minified line):
// such runs are counted in slices of this many characters, so no answer can stall the process.
const MAX_RUN_CHARS = 1_000;
const CHUNK_CHARS = 8_000;

/**
 * Integer token count of a text. Exact for ordinary text; long texts are counted in chunks cut
 * before a single space between words (where the tokenizer splits anyway), and runs without whitespace longer
 * than 1,000 characters in slices, which can differ from a one-pass count by a token per slice.
 */
export function countTokens(text: string, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  if (text.length === 0) return 0;
  const enc = encoder(encoding);
  if (text.length <= CHUNK_CHARS) return enc.encode(text, 'all').length;
  let total = 0;
  for (const chunk of chunksForCounting(text)) total += enc.encode(chunk, 'all').length;
  return total;
}

function* chunksForCounting(text: string): Generator<string> {
  const isSpace = (i: number) => text.charCodeAt(i) <= 32;
  let start = 0;
  let runStart = 0;
  for (let i = 1; i < text.length; i++) {
    if (isSpace(i)) runStart = i + 1;
    // Cut only before a single space between two non-space characters: the tokenizer never joins
    // across such a space (" word" starts a new piece), so the count stays exact there.
    const wordBoundary = text.charCodeAt(i) === 32 && !isSpace(i - 1) && i + 1 < text.length && !isSpace(i + 1);
    if (wordBoundary && i - start >= CHUNK_CHARS) {
      yield text.slice(start, i);
      start = i;
    } else if (!isSpace(i) && i - runStart >= MAX_RUN_CHARS) {
      yield text.slice(start, i);
      start = i;
      runStart = i;
    }
  }
  if (start < text.length) yield text.slice(start);
}

/** Token count of a value as the compact JSON an MCP client would put in context. */
export function countJsonTokens(value: unknown, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  return countTokens(JSON.stringify(value), encoding);
}
