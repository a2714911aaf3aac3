import type { UnavailableDependency } from './dependency-outage';

/**
 * A lib's refusal: a stable code, a message for the caller, the field at fault, and the HTTP status
 * an API answers it with. Each lib decides that status beside its codes, in a table over all of
 * them, so a new code does not compile until it has one.
 */
export abstract class DomainException<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** The HTTP status an API answers this refusal with. */
  abstract get httpStatus(): number;

  /** The store that is down, when the refusal is a 503 the caller may retry. */
  get dependency(): UnavailableDependency | undefined {
    return undefined;
  }
}
