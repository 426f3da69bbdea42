// What commands share in declaring themselves: parsers of option values, and the examples under --help.
import { InvalidArgumentError } from 'commander';

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number.');
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected ${min} to ${max}.`);
    return n;
  };
}
export const repeat = (value: string, previous: string[] = []) => [...previous, value];

export const EXAMPLES = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
