/** One table as the page shows it: headers and cells as text. The CSV download is built from this. */
export interface ShownTable {
  headers: string[];
  rows: string[][];
  /** The totals line under the table, if any (same columns). */
  footer?: string[];
}

/** RFC 4180 field; text a spreadsheet would run as a formula is defused with a leading quote. */
export function csvField(value: string): string {
  let v = value;
  if (/^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?$/.test(v)) v = `'${v}`;
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Exactly the shown table as CSV (CRLF lines, header first, totals last). */
export function tableToCsv(table: ShownTable): string {
  const lines = [table.headers, ...table.rows, ...(table.footer ? [table.footer] : [])];
  return lines.map((cells) => cells.map(csvField).join(',')).join('\r\n') + '\r\n';
}
