// `npm run docs:reference`: writes docs/reference/, the references drawn from the code itself: the `kiln`
// command line from its commander program, the configuration from config.ts's schemas, the webhook events
// from their catalogue and payload schemas, the error codes from the
// error table, the control plane's areas from their modules' opening comments. Each page is a pure function of the code, so
// test/docs/reference.test.ts regenerates them in memory and fails while a checked-in page differs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, Help } from 'commander';
import { z } from 'zod';
import { buildProgram } from '../client/cli/program.ts';
import { Sections, Shared } from '../control-plane/config.ts';
import { ERROR_TABLE } from '../control-plane/core/errors.ts';
import { WEBHOOK_EVENT_CATALOGUE } from '../control-plane/webhooks/schemas.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const REFERENCE_DIR = join(ROOT, 'docs', 'reference');
export const REGENERATE_COMMAND = 'npm run docs:reference';

const generatedFrom = (source: string) =>
  `<!-- Generated from ${source} by \`${REGENERATE_COMMAND}\` (infra/docs-reference.ts). Do not edit: change the code, then regenerate. -->\n`;

/** Text in a table cell: one line, and `<name>` left as text rather than read as HTML. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/</g, '&lt;');
const code = (text: string) => `\`${text}\``;
/** A Markdown table; a pipe within a cell (in code too) is escaped. */
const table = (head: string[], rows: string[][]) =>
  [head, head.map(() => '---'), ...rows].map((row) => `| ${row.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`).join('\n');

// ---- The command line

/** What a command's --help prints after the usage and options (its examples). */
function helpAfter(command: Command): string {
  let printed = '';
  command.configureOutput({ writeOut: (text) => { printed += text; }, getOutHasColors: () => false });
  command.outputHelp();
  return printed.slice(command.helpInformation().length).trim();
}

/** A command's subcommands as --help lists them, but the `help` command every group has. */
const subcommandsOf = (command: Command, help: Help) => help.visibleCommands(command).filter((c) => c.name() !== 'help');

/** `kiln models search`: the command's name after its parents'. */
const pathOf = (command: Command): string => (command.parent ? `${pathOf(command.parent)} ${command.name()}` : command.name());

function commandSection(command: Command, help: Help): string {
  const parts = [`### ${code(pathOf(command))}`, command.description(), `Usage: ${code(help.commandUsage(command))}`];
  if (command.aliases().length) parts.push(`Aliases: ${command.aliases().map(code).join(', ')}`);
  const args = help.visibleArguments(command);
  if (args.length) parts.push(table(['Argument', 'Description'], args.map((a) => [code(help.argumentTerm(a)), cell(help.argumentDescription(a))])));
  const options = help.visibleOptions(command).filter((o) => o.long !== '--help');
  if (options.length) parts.push(table(['Option', 'Description'], options.map((o) => [code(help.optionTerm(o)), cell(help.optionDescription(o))])));
  const examples = helpAfter(command);
  if (examples) parts.push('```text\n' + examples + '\n```');
  return [parts.join('\n\n'), ...subcommandsOf(command, help).map((c) => commandSection(c, help))].join('\n\n');
}

export function cliReference(): string {
  const program = buildProgram();
  const help = program.createHelp();
  return `${generatedFrom('client/cli/program.ts')}
# The \`kiln\` command line

${program.description()} Every command takes the global options; \`kiln <command> --help\` prints a command's part of this page.

## Global options

${table(['Option', 'Description'], help.visibleOptions(program).map((o) => [code(help.optionTerm(o)), cell(help.optionDescription(o))]))}

## Commands

${subcommandsOf(program, help).map((c) => commandSection(c, help)).join('\n\n')}
`;
}

// ---- Schemas: the configuration and the webhook payloads

type JsonSchema = {
  type?: string | string[]; format?: string; enum?: unknown[]; anyOf?: JsonSchema[]; minimum?: number; maximum?: number; minLength?: number;
  default?: unknown; description?: string; title?: string; properties?: Record<string, JsonSchema>; required?: string[];
};

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;

/** A value's type in words: its choices, its range, its format. */
function typeOf(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(' or ');
  if (Array.isArray(s.type)) return s.type.map((type) => typeOf({ ...s, type })).join(' or ');
  if (s.enum) return s.enum.map((v) => code(String(v))).join(', ');
  if (s.type === 'integer' || s.type === 'number') {
    // z.int()'s own bounds (the safe integers) say nothing.
    const minimum = s.minimum === Number.MIN_SAFE_INTEGER ? undefined : s.minimum;
    const maximum = s.maximum === Number.MAX_SAFE_INTEGER ? undefined : s.maximum;
    if (minimum !== undefined && maximum !== undefined) return `${s.type}, ${minimum} to ${maximum}`;
    if (minimum !== undefined) return `${s.type}, at least ${minimum}`;
    if (maximum !== undefined) return `${s.type}, at most ${maximum}`;
    return s.type;
  }
  if (s.format === 'uri') return 'URL';
  if (s.format === 'date-time') return 'date-time';
  if (s.type === 'string' && s.minLength && s.minLength > 1) return `string, at least ${s.minLength} characters`;
  return s.type ?? 'any';
}

/** A default as written in the environment; a path inside the repository shown from its root. */
function defaultOf(s: JsonSchema): string {
  if (s.default === undefined) return 'unset';
  if (s.default === '') return 'empty';
  const value = String(s.default);
  return code(value.startsWith(ROOT) ? relative(ROOT, value).split(sep).join('/') : value);
}

const configTable = (schema: z.ZodObject) =>
  table(['Variable', 'Type', 'Default', 'Description'], Object.entries(jsonSchema(schema).properties ?? {})
    .map(([name, s]) => [code(name), typeOf(s), defaultOf(s), cell(s.description ?? '')]));

export function configurationReference(): string {
  return `${generatedFrom('control-plane/config.ts')}
# Configuration

Kiln's processes read their settings from the environment, validated once at start-up: an invalid value stops the start (exit status 1) with a message naming the variable. Each process reads the shared settings and its own section alone.

## Every process (the API, the worker and the inference gateway)

${configTable(Shared)}

## The API

${configTable(Sections.api)}

## The worker

${configTable(Sections.worker)}

## The inference gateway

${configTable(Sections.gateway)}
`;
}

/** A payload's fields, nested ones by their path (`data.id`). */
function fieldRows(s: JsonSchema, prefix = ''): string[][] {
  return Object.entries(s.properties ?? {}).flatMap(([name, field]) => {
    const path = prefix + name;
    const optional = s.required?.includes(name) ? '' : ' (optional)';
    return [[code(path), typeOf(field) + optional, cell(field.description ?? '')], ...fieldRows(field, `${path}.`)];
  });
}

export function eventsReference(): string {
  const events = Object.entries(WEBHOOK_EVENT_CATALOGUE);
  const payloads = [...new Set(events.map(([, e]) => e.payload))];
  const titleOf = (payload: z.ZodObject) => jsonSchema(payload).title ?? '';
  const link = (payload: z.ZodObject) => `[${titleOf(payload)}](#${titleOf(payload).toLowerCase().replace(/[^a-z0-9]+/g, '-')})`;
  return `${generatedFrom('control-plane/webhooks/schemas.ts and lib/webhook-payloads.ts')}
# Webhook events

A webhook subscription names the events it wants. Kiln POSTs each as JSON to the subscription's URL, signed as Standard Webhooks defines (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`), and retries a delivery that fails.

## Events

${table(['Event', 'Sent when', 'Payload'], events.map(([name, e]) => [code(name), cell(e.sent), link(e.payload)]))}

${payloads.map((payload) => `## ${titleOf(payload)}\n\n${table(['Field', 'Type', 'Description'], fieldRows(jsonSchema(payload)))}`).join('\n\n')}
`;
}

// ---- Errors

export function errorsReference(): string {
  return `${generatedFrom('control-plane/core/errors.ts')}
# Errors

Every error has a status and a code, answered in each surface's own format: under \`/v1\` \`{"error", "message", "code", "statusCode"}\`, under \`/api\` \`{"success": false, "data": null, "error": {"code", "message", "details"}}\`. The message says what went wrong in this request; \`details\` names the fields, headers or values concerned. A request that fails changes nothing. An error Kiln did not foresee is a bare 500 \`INTERNAL_ERROR\` with the request's id (\`X-Request-Id\`), and is a bug.

${table(['Status', 'Code', 'What it means'], ERROR_TABLE.map(([, status, errorCode, meaning]) => [String(status), code(errorCode), cell(meaning)]))}
`;
}

// ---- The control plane's areas

/** The folders of control-plane/ that are no area (no module.ts): what every area builds on. */
const SHARED_FOLDERS: Readonly<Record<string, string>> = {
  core: 'What services share: the errors they throw (and the table that maps each to a status and code), the permission of every route, row-level security, cursor pagination and period queries.',
  database: 'The ORM: shared columns, every entity (`entities.ts` finds each area\'s `*.entity.ts` file) and the list of migrations (`migrations/index.ts`).',
  mail: 'Outgoing e-mail behind one interface (`mailer.ts`): SMTP when `SMTP_URL` is set, otherwise one log line per message.',
  http: 'The middleware chain every request passes (request context, metrics, audit, authentication, rate limits, database scope, errors) and the router that checks each route\'s permission and validates its input.',
};

/** A file's opening comment, as one paragraph. */
function openingComment(path: string): string {
  const lines = readFileSync(path, 'utf8').split('\n');
  const comment = lines.slice(0, lines.findIndex((line) => !line.startsWith('//'))).map((line) => line.replace(/^\/\/ ?/, ''));
  return comment.join(' ').trim();
}

export function areasReference(): string {
  const folders = readdirSync(join(ROOT, 'control-plane'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const areas = folders.filter((name) => existsSync(join(ROOT, 'control-plane', name, 'module.ts')));
  const shared = folders.filter((name) => !areas.includes(name));
  const undescribed = shared.filter((name) => !SHARED_FOLDERS[name]);
  if (undescribed.length) throw new Error(`control-plane/${undescribed.join(', ')}: add a module.ts, or describe the folder in SHARED_FOLDERS (infra/docs-reference.ts)`);
  const rows = areas.map((name) => {
    const comment = openingComment(join(ROOT, 'control-plane', name, 'module.ts'));
    if (!comment) throw new Error(`control-plane/${name}/module.ts opens with no comment saying what the area is`);
    return [code(`${name}/`), cell(comment)];
  });
  return `${generatedFrom('the opening comment of each control-plane/<area>/module.ts')}
# The control plane's areas

Each folder of \`control-plane/\` with a \`module.ts\` is an area: its routes, service, schemas and entities side by side, and its module adds it to the app (one line in \`control-plane/modules.ts\`). What each one is, in its module's own words:

${table(['Area', 'What it is'], rows)}

## What every area builds on

${table(['Folder', 'What it is'], shared.map((name) => [code(`${name}/`), SHARED_FOLDERS[name]!]))}
`;
}

/** Every page of docs/reference/, by file name. */
export const REFERENCE_PAGES: Readonly<Record<string, () => string>> = {
  'cli.md': cliReference,
  'configuration.md': configurationReference,
  'events.md': eventsReference,
  'errors.md': errorsReference,
  'areas.md': areasReference,
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, page] of Object.entries(REFERENCE_PAGES)) {
    const path = join(REFERENCE_DIR, file);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, page());
    console.log(`wrote ${relative(ROOT, path)}`);
  }
}
