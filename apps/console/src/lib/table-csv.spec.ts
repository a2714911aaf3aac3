import { describe, expect, it } from 'vitest';
import { tableToCsv } from './table-csv';

describe('shown table as CSV', () => {
  it('should write the headers, rows and totals exactly as shown, quoting and defusing', () => {
    const csv = tableToCsv({
      headers: ['Team', 'Cost (USD)'],
      rows: [
        ['data, science', '0.10'],
        ['=cmd', '-0.000005'],
      ],
      footer: ['Total', '0.099995'],
    });
    expect(csv).toBe('Team,Cost (USD)\r\n"data, science",0.10\r\n\'=cmd,-0.000005\r\nTotal,0.099995\r\n');
  });
});
