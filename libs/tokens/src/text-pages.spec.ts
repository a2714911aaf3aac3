import { describe, expect, it } from 'vitest';
import { countTokens } from './token-counter';
import { splitTextIntoPages } from './text-pages';

const paragraph = (i: number) => `Paragraph ${i}. ${'The quick brown fox jumps over the lazy dog. '.repeat(12).trim()}`;

describe('splitTextIntoPages', () => {
  it('should keep a text that fits as one page', () => {
    expect(splitTextIntoPages('short text', 100)).toEqual(['short text']);
  });

  it('should cut at paragraph boundaries, keep every page within budget and lose nothing', () => {
    const text = Array.from({ length: 40 }, (_, i) => paragraph(i)).join('\n\n');
    const pages = splitTextIntoPages(text, 500);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.join('')).toBe(text);
    for (const page of pages) expect(countTokens(page)).toBeLessThanOrEqual(500);
    for (const page of pages.slice(0, -1)) expect(page.endsWith('\n\n')).toBe(true);
  });

  it('should fall back to lines, then sentences, then words', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}: some log output here`).join('\n');
    for (const page of splitTextIntoPages(lines, 200).slice(0, -1)) expect(page.endsWith('\n')).toBe(true);
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(' ');
    const pages = splitTextIntoPages(words, 150);
    expect(pages.join('')).toBe(words);
    for (const page of pages.slice(0, -1)) expect(page.endsWith(' ')).toBe(true);
  });

  it('should cut inside a word only when one word is longer than a page', () => {
    const blob = 'x'.repeat(20_000);
    const pages = splitTextIntoPages(blob, 100);
    expect(pages.join('')).toBe(blob);
    for (const page of pages) expect(countTokens(page)).toBeLessThanOrEqual(100);
  });

  it('should handle text without spaces in other scripts', () => {
    const zh = '这是一个很长的中文句子，用来测试分页功能是否正常。'.repeat(200);
    const pages = splitTextIntoPages(zh, 120);
    expect(pages.join('')).toBe(zh);
    for (const page of pages) expect(countTokens(page)).toBeLessThanOrEqual(120);
  });
});

describe('countTokens on long texts', () => {
  it('should count ordinary long text exactly like a single pass would', async () => {
    const { getEncoding } = await import('js-tiktoken');
    const text = Array.from({ length: 3000 }, (_, i) => `Sentence number ${i} talks about tokens.`).join(' ');
    expect(countTokens(text)).toBe(getEncoding('o200k_base').encode(text, 'all').length);
  });

  it('should count a huge blob without whitespace, close to its true size', () => {
    const blob = 'QUJD'.repeat(50_000); // 200 KB of base64-like text
    const n = countTokens(blob);
    expect(n).toBeGreaterThan(10_000);
    expect(n).toBeLessThan(200_000);
  });
});
