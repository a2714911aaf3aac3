import { describe, expect, it } from 'vitest';
import { FieldValidationException } from '../errors/field-validation.exception';
import { etagOf, parseIfMatch } from './if-match.decorator';

describe('If-Match', () => {
  it('should read the version of a strong or weak ETag, and none when absent or *', () => {
    expect(parseIfMatch(etagOf(3))).toBe(3);
    expect(parseIfMatch('W/"12"')).toBe(12);
    expect(parseIfMatch('7')).toBe(7);
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch('*')).toBeUndefined();
  });

  it('should refuse anything else naming the header', () => {
    for (const bad of ['"x"', '"1", "2"', '-1', '"99999999999"']) {
      expect(() => parseIfMatch(bad)).toThrow(FieldValidationException);
    }
  });
});
