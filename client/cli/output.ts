// How the CLI shows things: a table for people, JSON or YAML for programs (--output), colour and spinners
// only on a terminal without NO_COLOR, errors on stderr with Kiln's code and a hint.
import { styleText } from 'node:util';
import Table from 'cli-table3';
import ora, { type Ora } from 'ora';
import YAML from 'yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

/** Colour and animation: a terminal, and nobody asked for none. */
export const fancy = (stream: NodeJS.WriteStream = process.stdout) => Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';

type Style = Parameters<typeof styleText>[0];
export const paint = (style: Style, text: string, stream: NodeJS.WriteStream = process.stdout) => (fancy(stream) ? styleText(style, text, { validateStream: false }) : text);

export interface Column<T> { header: string; value: (row: T) => unknown }

const cell = (value: unknown) => (value === null || value === undefined ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/** Rows as a table, or `data` (what programs get) as JSON or YAML. */
export function printList<T>(format: OutputFormat, rows: readonly T[], columns: readonly Column<T>[], data: unknown = rows): void {
  if (format !== 'table') return printData(format, data);
  if (rows.length === 0) {
    process.stdout.write(paint('dim', 'Nothing to show.') + '\n');
    return;
  }
  const table = new Table({ head: columns.map((c) => paint('bold', c.header)), style: { head: [], border: [] } });
  for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
  process.stdout.write(table.toString() + '\n');
}

/** One object: field and value in two columns, or JSON/YAML. */
export function printObject(format: OutputFormat, object: Record<string, unknown>): void {
  if (format !== 'table') return printData(format, object);
  const table = new Table({ style: { head: [], border: [] } });
  for (const [key, value] of Object.entries(object)) table.push({ [paint('bold', key)]: cell(value) });
  process.stdout.write(table.toString() + '\n');
}

export function printData(format: OutputFormat, data: unknown): void {
  process.stdout.write(format === 'yaml' ? YAML.stringify(data) : JSON.stringify(data, null, 2) + '\n');
}

/** A line for people on stderr, so stdout stays what the command answers. */
export const note = (text: string) => process.stderr.write(text + '\n');

/**
 * Progress of something that takes a while: a spinner on a terminal, otherwise one line per change on
 * stderr (a log, a CI job).
 */
export interface Progress {
  update(text: string): void;
  succeed(text: string): void;
  fail(text: string): void;
}

export function progress(text: string): Progress {
  if (fancy(process.stderr)) {
    const spinner: Ora = ora({ text, stream: process.stderr }).start();
    return {
      update: (t) => { if (spinner.text !== t) spinner.text = t; },
      succeed: (t) => { spinner.succeed(t); },
      fail: (t) => { spinner.fail(t); },
    };
  }
  let last = text;
  note(text);
  return {
    update: (t) => { if (t !== last) note((last = t)); },
    succeed: (t) => { if (t !== last) note(t); },
    fail: (t) => { if (t !== last) note(t); },
  };
}
