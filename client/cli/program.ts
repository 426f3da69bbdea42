// The `kiln` command line: every command a call or a few through the SDK (sdk/client.ts), as any other
// client of Kiln would make them; each group of commands is a file of commands/. Exit codes are stable: 0 done,
// 1 an error (Kiln's or the network's), 2 a usage mistake (bad flags or arguments, input Kiln refused as invalid,
// a question without a terminal).
import { Command, CommanderError, Option } from 'commander';
import { KilnError } from '../sdk/client.ts';
import { addAuthCommands } from './commands/auth.ts';
import { addCatalogCommands } from './commands/catalog.ts';
import { addChatCommand } from './commands/chat.ts';
import { addCompletionCommand } from './commands/completion.ts';
import { addDeploymentCommands } from './commands/deployments.ts';
import { addKeyCommands } from './commands/keys.ts';
import { addRecoverCommand } from './commands/recover.ts';
import { addUsageCommand } from './commands/usage.ts';
import { DEFAULT_SERVER } from './config.ts';
import { CliError } from './errors.ts';
import { EXAMPLES } from './options.ts';
import { note, OUTPUT_FORMATS, paint } from './output.ts';
import type { GlobalOptions } from './session.ts';

export function buildProgram(): Command {
  const program = new Command('kiln');
  program
    .description('Deploy and run AI models on Kiln from the terminal.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (text, write) => write(paint('red', text.trimEnd(), process.stderr) + '\n') })
    .option('-p, --profile <name>', 'the saved login to use (default: the last one logged in; env KILN_PROFILE)')
    .option('--server <url>', `the Kiln server (default: the profile's, else ${DEFAULT_SERVER}; env KILN_SERVER)`)
    .option('--org <id>', 'the organization to act in (default: the login\'s; env KILN_ORG)')
    .addOption(new Option('-o, --output <format>', 'how to print results').choices(OUTPUT_FORMATS))
    .option('--json', 'the same as --output json')
    .addHelpText('after', EXAMPLES(['kiln login', 'kiln deploy chat --model meta-llama/Llama-3.1-8B-Instruct --gpu nvidia-l4', 'kiln ls --json', 'kiln chat chat']));

  // `kiln --help` lists the commands in the order they are added.
  addAuthCommands(program);
  addDeploymentCommands(program);
  addChatCommand(program);
  addCatalogCommands(program);
  addKeyCommands(program);
  addUsageCommand(program);
  addRecoverCommand(program);
  addCompletionCommand(program);
  return program;
}

/** The hint shown under an error Kiln answered, by status. */
export function hintFor(error: KilnError, command: string): string {
  switch (error.statusCode) {
    case 400: case 422: return `Check the arguments: \`kiln ${command} --help\`.`;
    case 401: return 'Log in again: `kiln login`.';
    case 402: return 'Add credits or raise the budget in the dashboard, then try again.';
    case 403: return 'This credential may not do that: log in as a member with the right role, or use a key with a wider scope.';
    case 404: return '`kiln ls` lists your deployments (by name or id).';
    case 409: return 'It is in a state that refuses this now: `kiln get <deployment>` shows its state.';
    case 429: return 'Too many requests: wait a moment and try again.';
    default: return `Kiln failed to answer; try again later${error.requestId ? ` (request id ${error.requestId})` : ''}.`;
  }
}

/** Runs the CLI on argv; answers the exit code (0 done, 1 error, 2 usage). */
export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  // The command that ran (e.g. `models search`), for the hint's `kiln <command> --help`.
  let name = 'kiln';
  let server = DEFAULT_SERVER;
  program.hook('preAction', (_program, action) => {
    const path: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) path.unshift(c.name());
    name = path.join(' ');
    server = action.optsWithGlobals<GlobalOptions>().server ?? process.env.KILN_SERVER ?? server;
  });
  const fail = (code: string, message: string, hint: string | undefined) => {
    note(`${paint('red', 'error', process.stderr)}: ${message} (${code})`);
    if (hint) note(`${paint('dim', 'hint', process.stderr)}: ${hint}`);
  };
  try {
    await program.parseAsync(argv as string[]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return ['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync'].includes(error.code) ? 0 : 2;
    if (error instanceof CliError) {
      fail(error.code, error.message, error.hint);
      return error.exitCode;
    }
    if (error instanceof KilnError) {
      fail(error.code, error.message, hintFor(error, name));
      return error.statusCode === 400 || error.statusCode === 422 ? 2 : 1;
    }
    if (error instanceof Error && error.name === 'ExitPromptError') return 130;
    if (error instanceof TypeError && error.message === 'fetch failed') {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      fail('UNREACHABLE', `Cannot reach Kiln: ${cause?.code ?? cause?.message ?? 'network error'}`, `Is it running at ${server} (\`npm start\`)? Or point at it: \`--server <url>\` / \`kiln login --server <url>\`.`);
      return 1;
    }
    fail('INTERNAL', error instanceof Error ? error.message : String(error), undefined);
    return 1;
  }
}
