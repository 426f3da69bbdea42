// The export's body: batches of audit records as CSV (csv-stringify) or JSON Lines text, in a Readable
// that asks for the next batch only when the client has taken the previous one (backpressure).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { AUDIT_COLUMNS, type AuditRecordBody, type EXPORT_FORMATS } from './schemas.ts';

// A spreadsheet would run a cell starting with one of these as a formula, and record fields such as
// resourceId come from request paths: such cells are prefixed with a quote (OWASP's CSV injection advice).
const FORMULA_START = /^[=+\-@\t\r]/;

export function exportStream(batches: AsyncIterable<AuditRecordBody[]>, format: (typeof EXPORT_FORMATS)[number]): Readable {
  async function* text() {
    let header = format === 'csv';
    for await (const records of batches) {
      if (format === 'jsonl') {
        if (records.length) yield records.map((record) => `${JSON.stringify(record)}\n`).join('');
      } else if (records.length || header) {
        yield stringify(records, {
          header, columns: AUDIT_COLUMNS, eof: true,
          cast: { string: (value) => (FORMULA_START.test(value) ? `'${value}` : value) },
        });
        header = false;
      }
    }
  }
  // Byte mode: the buffer is counted in bytes, so at most about one batch waits ahead of the socket.
  return Readable.from(text(), { objectMode: false });
}
