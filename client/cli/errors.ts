// Failures the CLI states itself, beside those Kiln answers (KilnError), each with its exit code.

/** A failure the CLI itself states: its code, a hint, and the exit code (1 error, 2 usage). */
export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly exitCode: number;
  constructor(code: string, message: string, hint?: string, exitCode = 1) {
    super(message);
    this.code = code;
    this.hint = hint;
    this.exitCode = exitCode;
  }
}

export const usage = (message: string, hint?: string) => new CliError('USAGE', message, hint, 2);
