import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { countJsonTokens, countTokens } from './token-counter';

const reference = getEncoding('o200k_base');
const referenceCount = (text: string) => reference.encode(text, 'all').length;

/** Deterministic pseudo-random text mixing scripts, digits, punctuation and every kind of whitespace. */
function mixedText(seed: number, length: number): string {
  const alphabet = [
    'a',
    'Z',
    'é',
    'ß',
    '中',
    '文',
    'ж',
    'ي',
    '7',
    '42',
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\t',
    '\r\n',
    '.',
    ',',
    "'s",
    "'LL",
    '{"',
    '":',
    '}',
    '😀',
    '-',
    '_',
    '$',
    'the',
    ' quick',
    'Fox',
  ];
  let x = seed;
  let out = '';
  while (out.length < length) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

describe('countTokens', () => {
  it('should equal a single js-tiktoken pass on real tool catalogs', () => {
    const dir = path.resolve(__dirname, '../../../test/fixtures/catalogs');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      // Whole files (pretty-printed JSON) and each line on its own.
      expect(countTokens(text), file).toBe(referenceCount(text));
      for (const line of text.split('\n').slice(0, 2000)) expect(countTokens(line)).toBe(referenceCount(line));
    }
  });

  it('should equal a single js-tiktoken pass on mixed scripts, digits and whitespace', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const text = mixedText(seed, 50 + (seed % 40) * 25);
      expect(countTokens(text), `seed ${seed}`).toBe(referenceCount(text));
    }
  });

  it('should count special tokens as one token each, as js-tiktoken does', () => {
    const text = 'before<|endoftext|>after <|endoftext|><|endofprompt|> end';
    expect(countTokens(text)).toBe(referenceCount(text));
  });

  it('should count the same text the same way when asked again (remembered pieces)', () => {
    const text = mixedText(7, 2000);
    expect(countTokens(text)).toBe(countTokens(text));
    expect(countJsonTokens({ content: [{ type: 'text', text }] })).toBe(
      referenceCount(JSON.stringify({ content: [{ type: 'text', text }] })),
    );
  });
});

describe('countTokens on long pieces', () => {
  it('should equal a single js-tiktoken pass on runs of letters, digits and symbols up to 600 characters', () => {
    const runs = [
      (n: number) => 'x'.repeat(n),
      (n: number) => 'QUJD'.repeat(n).slice(0, n),
      (n: number) => mixedText(n, n).replace(/[^A-Za-z]/g, 'q'),
      (n: number) => 'aGVsbG8gd29ybGQ'.repeat(n).slice(0, n),
      (n: number) => 'éß中ж'.repeat(n).slice(0, n),
    ];
    for (const run of runs)
      for (const n of [1, 2, 3, 17, 64, 65, 255, 256, 257, 600]) {
        const text = run(n);
        expect(countTokens(text), `${text.slice(0, 12)}… (${n})`).toBe(referenceCount(text));
      }
  });
});
