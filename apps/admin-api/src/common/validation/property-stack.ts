/**
 * Several property decorators as one, applied as if written in this order above the property: the last
 * first, as TypeScript does. class-validator then checks (and lists failures) in the same order as the
 * stack it replaces, so a shared field validator does not reorder a 400's messages.
 */
export function propertyStack(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, propertyKey) => {
    for (const decorator of [...decorators].reverse()) decorator(target, propertyKey);
  };
}
