import { DEFAULT_TOKEN_ENCODING, TokenEncodingName, countTokens } from './token-counter';

// Natural boundaries, best first: paragraph, line, sentence, word.
const BOUNDARIES: RegExp[] = [/\n\s*\n/g, /\n/g, /[.!?。！？](?=\s)/g, /\s/g];

/** The end of the last boundary match in `text` that is past half of it (so pages stay full), or -1. */
function lastBoundary(text: string): number {
  for (const re of BOUNDARIES) {
    let end = -1;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) end = m.index + m[0].length;
    if (end > text.length / 2) return end;
  }
  return -1;
}

/**
 * Splits a text into pages of at most `maxTokens` tokens each, cutting at the best natural
 * boundary (paragraph, line, sentence, word) that keeps a page more than half full, and only
 * mid-word when a single word is longer than a page. Joining the pages gives the text back.
 */
export function splitTextIntoPages(
  text: string,
  maxTokens: number,
  encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING,
): string[] {
  if (maxTokens < 1) throw new RangeError('maxTokens must be at least 1');
  const total = countTokens(text, encoding);
  if (total <= maxTokens) return [text];
  const charsPerToken = text.length / total;
  const pages: string[] = [];
  let pos = 0;
  while (pos < text.length) {
    const rest = text.length - pos;
    let window = Math.min(rest, Math.max(1, Math.floor(maxTokens * charsPerToken * 1.2)));
    // Shrink the window until it fits; each step scales by how far over it is.
    for (;;) {
      const tokens = countTokens(text.slice(pos, pos + window), encoding);
      if (tokens <= maxTokens) break;
      window = Math.max(1, Math.min(window - 1, Math.floor((window * maxTokens) / tokens) - 1));
    }
    let end = pos + window;
    if (end < text.length) {
      const cut = lastBoundary(text.slice(pos, end));
      if (cut > 0) end = pos + cut;
    }
    pages.push(text.slice(pos, end));
    pos = end;
  }
  return pages;
}
