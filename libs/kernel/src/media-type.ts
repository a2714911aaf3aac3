/** The media type of a Content-Type value, lower-cased, without parameters (`Application/JSON; charset=utf-8` -> `application/json`). */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}
