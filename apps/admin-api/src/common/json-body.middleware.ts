import { json } from 'express';
import type { NextFunction, Request, Response } from 'express';
import { FieldValidationException } from './field-validation.exception';

export const JSON_BODY_LIMIT = '1mb';

const parseJson = json({ limit: JSON_BODY_LIMIT });

/**
 * Express's JSON parser, with malformed JSON turned into a 400 that names `body` (Nest would
 * otherwise pass the parser's message through as a bare 400). Other parser errors (413, 415)
 * reach the exception filter as they are.
 */
export function jsonBodyMiddleware(req: Request, res: Response, next: NextFunction): void {
  parseJson(req, res, (err?: unknown) => {
    if (err instanceof SyntaxError) {
      next(new FieldValidationException('body', ['request body is not valid JSON']));
      return;
    }
    next(err as Error | undefined);
  });
}
