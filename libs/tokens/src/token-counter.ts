import { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import p50kBase from 'js-tiktoken/ranks/p50k_base';
import r50kBase from 'js-tiktoken/ranks/r50k_base';

/** Encodings js-tiktoken bundles; o200k_base is the default (GPT-4o family, close to Claude's). */
export type TokenEncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base';

export const DEFAULT_TOKEN_ENCODING: TokenEncodingName = 'o200k_base';

const RANKS: Record<TokenEncodingName, TiktokenBPE> = {
  o200k_base: o200kBase,
  cl100k_base: cl100kBase,
  p50k_base: p50kBase,
  r50k_base: r50kBase,
};

// BPE cost grows with the square of a piece's length (a long run of letters in a blob): longer
// pieces are counted in slices of this many characters, so no answer can stall the process.
const MAX_PIECE_CHARS = 256;
// Pieces up to this length have their count remembered; most pieces are words and punctuation.
const MAX_CACHED_PIECE_CHARS = 64;
const MAX_CACHED_PIECES = 200_000;

/**
 * Counts tokens the way js-tiktoken encodes, piece by piece: the encoding's pattern splits a text
 * into pieces (words, numbers, punctuation, spaces) and BPE runs on each piece on its own, so a
 * text's count is the sum of its pieces' counts. Pieces repeat across texts, so their counts are
 * remembered: a result is counted in about the time of a regex scan instead of a full BPE pass
 * (js-tiktoken also recompiles its patterns on every call, a fixed cost that dominates short texts).
 */
class PieceTokenCounter {
  private readonly enc: Tiktoken;
  private readonly pattern: RegExp;
  private readonly special: RegExp | null;
  private readonly pieces = new Map<string, number>();

  constructor(ranks: TiktokenBPE) {
    this.enc = new Tiktoken(ranks);
    this.pattern = new RegExp(ranks.pat_str, 'gu');
    const specials = Object.keys(ranks.special_tokens);
    this.special = specials.length ? new RegExp(specials.map(escapeRegExp).join('|'), 'g') : null;
  }

  count(text: string): number {
    if (!this.special) return this.countOrdinary(text);
    // Special tokens (allowed, as js-tiktoken's 'all'): one token each; the text between them as usual.
    let total = 0;
    let start = 0;
    this.special.lastIndex = 0;
    for (let m = this.special.exec(text); m !== null; m = this.special.exec(text)) {
      total += this.countOrdinary(text.slice(start, m.index)) + 1;
      start = m.index + m[0].length;
    }
    return total + this.countOrdinary(start === 0 ? text : text.slice(start));
  }

  private countOrdinary(text: string): number {
    let total = 0;
    this.pattern.lastIndex = 0;
    for (let m = this.pattern.exec(text); m !== null; m = this.pattern.exec(text)) total += this.countPiece(m[0]);
    return total;
  }

  private countPiece(piece: string): number {
    if (piece.length > MAX_PIECE_CHARS) {
      let total = 0;
      for (let i = 0; i < piece.length; i += MAX_PIECE_CHARS)
        total += this.enc.encode(piece.slice(i, i + MAX_PIECE_CHARS), 'all').length;
      return total;
    }
    if (piece.length > MAX_CACHED_PIECE_CHARS) return this.enc.encode(piece, 'all').length;
    let n = this.pieces.get(piece);
    if (n === undefined) {
      n = this.enc.encode(piece, 'all').length;
      if (this.pieces.size >= MAX_CACHED_PIECES) this.pieces.clear();
      this.pieces.set(piece, n);
    }
    return n;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const counters = new Map<TokenEncodingName, PieceTokenCounter>();

/** Loading an encoding takes ~0.4 s, so each process loads each encoding once. */
function counter(name: TokenEncodingName): PieceTokenCounter {
  let c = counters.get(name);
  if (!c) {
    c = new PieceTokenCounter(RANKS[name]);
    counters.set(name, c);
  }
  return c;
}

/**
 * Integer token count of a text, as js-tiktoken would encode it (special tokens allowed). Exact
 * for ordinary text; a piece longer than 256 characters (a run of letters in a blob) is counted
 * in slices, which can differ from a one-pass count by a token per slice.
 */
export function countTokens(text: string, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  if (text.length === 0) return 0;
  return counter(encoding).count(text);
}

/** Token count of a value as the compact JSON an MCP client would put in context. */
export function countJsonTokens(value: unknown, encoding: TokenEncodingName = DEFAULT_TOKEN_ENCODING): number {
  return countTokens(JSON.stringify(value), encoding);
}
