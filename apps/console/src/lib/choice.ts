/** `value` if it is one of `choices` (a Select answers any string), else `fallback`. */
export function oneOf<T extends string>(choices: readonly T[], value: string | null | undefined, fallback: T): T {
  return choices.find((c) => c === value) ?? fallback;
}
