// Configuration from the environment, validated once at start-up, with safe defaults for a laptop.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  KILN_ENV: z.enum(['development', 'production']).default('development'),
  // One secret from which the JWT and cursor keys are derived (HKDF): at least 32 characters.
  KILN_SIGNING_KEY: z.string().min(32).optional(),
  KILN_ADMIN_EMAILS: z.string().default(''),
  KILN_ENDPOINT_DOMAIN: z.string().regex(/^[a-z0-9.-]+$/).default('endpoints.kiln.localhost'),
  // Behind a load balancer: take the client address from X-Forwarded-For (per-address rate limits, audit).
  KILN_TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  // An external error tracker: each unhandled error is also POSTed there as JSON.
  ERROR_TRACKER_URL: z.url({ protocol: /^https?$/ }).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Outgoing mail (invitations, address confirmations). Unset: messages are logged (development only).
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).default('Kiln <no-reply@kiln.localhost>'),
  // Where users reach Kiln: the links in e-mails start with it.
  KILN_PUBLIC_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8080'),
});

export interface Config {
  readonly port: number;
  /** Unset: main.ts starts embedded PostgreSQL under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly env: 'development' | 'production';
  readonly signingKey: string;
  readonly adminEmails: readonly string[];
  readonly endpointDomain: string;
  readonly trustProxy: boolean;
  readonly logLevel: string;
  readonly errorTrackerUrl: string | undefined;
  /** Unset: mail is written to the log instead of sent (refused in production). */
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly publicUrl: string;
}

export class ConfigError extends Error {}

export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration: ${z.prettifyError(parsed.error)}`);
  }
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  if (e.KILN_ENV === 'production' && !e.KILN_SIGNING_KEY) {
    throw new ConfigError('invalid configuration: KILN_SIGNING_KEY is required when KILN_ENV=production');
  }
  // A logged message would put invitation tokens in production logs.
  if (e.KILN_ENV === 'production' && !e.SMTP_URL) {
    throw new ConfigError('invalid configuration: SMTP_URL is required when KILN_ENV=production');
  }
  return {
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    env: e.KILN_ENV,
    signingKey: e.KILN_SIGNING_KEY ?? (await developmentSecret(dataDir, 'signing-key')),
    adminEmails: e.KILN_ADMIN_EMAILS.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
    endpointDomain: e.KILN_ENDPOINT_DOMAIN,
    trustProxy: e.KILN_TRUST_PROXY === 'true',
    logLevel: e.LOG_LEVEL,
    errorTrackerUrl: e.ERROR_TRACKER_URL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    publicUrl: e.KILN_PUBLIC_URL.replace(/\/+$/, ''),
  };
}

/**
 * Development only: a secret generated once and kept in DATA_DIR (the signing key, the Pulumi passphrase),
 * so sessions and stack secrets survive restarts.
 */
export async function developmentSecret(dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}
