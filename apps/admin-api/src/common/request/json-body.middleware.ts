import { json } from 'express';
import type { NextFunction, Request, Response } from 'express';
import { FieldValidationException } from '../errors/field-validation.exception';
import { findBadInput } from '../validation/input-text';

export const JSON_BODY_LIMIT = '1mb';

const parseJson = json({ limit: JSON_BODY_LIMIT });

/**
 * Express's JSON parser, with malformed JSON turned into a 400 that names `body` (Nest would
 * otherwise pass the parser's message through as a bare 400). Other parser errors (413, 415)
 * reach the exception filter as they are. A parsed body is then walked once, without recursion:
 * a string Postgres cannot store (NUL, lone surrogate) or nesting past MAX_INPUT_DEPTH is a 400
 * naming its JSON path, before validation or any service can trip over it.
 */
export function jsonBodyMiddleware(req: Request, res: Response, next: NextFunction): void {
  parseJson(req, res, (err?: unknown) => {
    if (err instanceof SyntaxError) {
      next(new FieldValidationException('body', ['request body is not valid JSON']));
      return;
    }
    if (err) {
      next(err as Error);
      return;
    }
    const bad = req.body === undefined ? null : findBadInput(req.body, 'body');
    next(bad ? new FieldValidationException(bad.path, [bad.message]) : undefined);
  });
}

/** The same check for the query string: a NUL (`%00`) or a lone surrogate is a 400 naming the parameter. */
export function queryInputMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const bad = findBadInput(req.query, 'query');
  next(bad ? new FieldValidationException(bad.path, [bad.message]) : undefined);
}
