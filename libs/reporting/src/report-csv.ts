import { REPORT_METRICS, ReportMetric, SpendReport } from './spend-report';

// A cell starting with one of these is run as a formula by spreadsheet programs (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field (RFC 4180): quoted when needed; text that a spreadsheet would run as a formula is prefixed with `'`. */
export function csvField(value: string | bigint | number | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return value.toString();
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The report's rows as CSV with a header line, CRLF line ends (RFC 4180); integers, no totals line. */
export function spendReportCsv(report: SpendReport): string {
  const lines = [report.columns.map(csvField).join(',')];
  for (const row of report.rows) {
    lines.push(
      report.columns
        .map((c) =>
          (REPORT_METRICS as readonly string[]).includes(c)
            ? csvField(row.figures[c as ReportMetric])
            : csvField(row[c] ?? null),
        )
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
