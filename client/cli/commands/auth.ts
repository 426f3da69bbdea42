// `kiln login`, `logout`, `whoami`: the credential saved for later commands, and who it acts as.
import type { Command } from 'commander';
import { input, password as passwordPrompt, select } from '@inquirer/prompts';
import { createKilnClient, KilnError, ok, type KilnClient } from '../../sdk/client.ts';
import { credentialsFile } from '../config.ts';
import { usage } from '../errors.ts';
import { interactive, readStdin } from '../input.ts';
import { EXAMPLES } from '../options.ts';
import { note, printObject } from '../output.ts';
import { session } from '../session.ts';

/** What a login says when it took the default from another profile. */
function nowDefault(replaced: string | undefined): string {
  return replaced ? ` It is now the default profile, in place of "${replaced}" (commands use it unless --profile says otherwise).` : '';
}

/**
 * The organization a credential acts in. A key scoped to deployments may not read the organization's settings
 * (403); it is then checked against a route its scope reads, so a key of another organization is still refused,
 * and the organization is known by its id alone.
 */
async function organizationOf(client: KilnClient, orgId: string): Promise<{ id: string; name?: string; plan?: string }> {
  try {
    return await ok(client.GET('/v1/settings/organization', { params: { query: { orgId } } }));
  } catch (error) {
    if (!(error instanceof KilnError && error.statusCode === 403)) throw error;
    await ok(client.GET('/v1/deployments', { params: { query: { orgId, limit: 1 } } }));
    return { id: orgId };
  }
}

export function addAuthCommands(program: Command): void {
  program.command('login')
    .description('Log in to a Kiln server with your e-mail and password, or with an API key; the credential is saved for later commands (owner-only file)')
    .option('--email <email>', 'your e-mail address (the password is asked, or read from stdin with --password-stdin)')
    .option('--password-stdin', 'read the password from stdin')
    .option('--api-key <key>', 'an API key (sk_live_... or sk_test_...) instead of e-mail and password; prefer --api-key-stdin, which keeps it out of your shell history')
    .option('--api-key-stdin', 'read the API key from stdin')
    .addHelpText('after', EXAMPLES(['kiln login', 'kiln login --email ada@example.com', 'echo "$KEY" | kiln login --api-key-stdin --org org_... --server https://kiln.example.com --profile prod']))
    .action(async (options: { email?: string; passwordStdin?: boolean; apiKey?: string; apiKeyStdin?: boolean }, command: Command) => {
      const s = await session(command);
      let apiKey = options.apiKey ?? (options.apiKeyStdin ? (await readStdin()).trim() : undefined);
      let email = options.email;
      if (!apiKey && !email) {
        if (!interactive()) throw usage('Nothing to log in with', 'Give --email (with --password-stdin) or --api-key-stdin: there is no terminal to ask on.');
        const how = await select({ message: 'Log in with', choices: [{ name: 'E-mail and password', value: 'password' }, { name: 'API key', value: 'key' }] });
        if (how === 'key') apiKey = await passwordPrompt({ message: 'API key', mask: '*' });
        else email = await input({ message: 'E-mail' });
      }
      if (apiKey) {
        const org = s.options.org ?? process.env.KILN_ORG ?? (interactive() && !options.apiKeyStdin ? await input({ message: 'Organization id (org_...)' }) : undefined);
        if (!org) throw usage('An API key login needs the organization it belongs to', 'Add --org org_...: the dashboard\'s API keys page shows it, with the whole login command (so does `kiln whoami` on a password login).');
        const client = createKilnClient({ baseUrl: s.server, token: apiKey, userAgent: 'kiln-cli' });
        const organization = await organizationOf(client, org);
        const replaced = await s.saveProfile({ server: s.server, token: apiKey, kind: 'api_key', organizationId: organization.id });
        note(`Logged in to ${s.server} with an API key, organization ${organization.name ? `${organization.name} (${organization.id})` : organization.id}, as profile "${s.name}".${nowDefault(replaced)}`);
        return;
      }
      const password = options.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : interactive() ? await passwordPrompt({ message: 'Password', mask: '*' }) : undefined;
      if (!password) throw usage('No password', 'Pipe it with --password-stdin: there is no terminal to ask on.');
      const client = createKilnClient({ baseUrl: s.server, userAgent: 'kiln-cli' });
      const login = await ok(client.POST('/v1/auth/signin', { body: { email: email!, password } }));
      const replaced = await s.saveProfile({ server: s.server, token: login.access_token, refreshToken: login.refresh_token, kind: 'session', organizationId: login.user.organization_id, email: login.user.email });
      note(`Logged in to ${s.server} as ${login.user.email}, organization ${login.user.organization_id}, as profile "${s.name}".${nowDefault(replaced)}`);
    });

  program.command('logout')
    .description('Forget the saved credential of a profile')
    .addHelpText('after', EXAMPLES(['kiln logout', 'kiln logout --profile prod']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      note((await s.forgetProfile()) ? `Logged out of profile "${s.name}" (${credentialsFile()}).` : `Profile "${s.name}" was not logged in.`);
    });

  program.command('whoami')
    .description('Who and which organization the saved credential acts as')
    .addHelpText('after', EXAMPLES(['kiln whoami', 'kiln whoami --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const organization = await organizationOf(s.client, s.orgId);
      const profile = await ok(s.client.GET('/v1/settings/profile', { params: { query: { orgId: s.orgId } } })).catch((error: unknown) => {
        if (error instanceof KilnError && error.statusCode === 403) return undefined;
        throw error;
      });
      // A key that may not read the organization's settings shows its id only.
      printObject(s.format, {
        profile: s.name, server: s.server, user: profile?.email ?? '(API key)', organizationId: organization.id,
        ...(organization.name !== undefined && { organization: organization.name, plan: organization.plan }),
      });
    });
}
