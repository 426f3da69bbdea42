// Where `kiln login` keeps credentials: one YAML file in the user's configuration directory
// ($XDG_CONFIG_HOME/kiln, else ~/.config/kiln), readable by its owner alone (0600, the folder 0700),
// with a profile per Kiln server and the name of the one in use.
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';

export interface Profile {
  /** The Kiln server, e.g. http://localhost:8080. */
  server: string;
  /** An API key, or a login's access token. */
  token: string;
  kind: 'api_key' | 'session';
  /** A session's refresh token: a new access token when this one expires. */
  refreshToken?: string;
  /** The organization commands act in (the reference API's orgId). */
  organizationId?: string;
  email?: string;
}

export interface CliConfig {
  current?: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
export const DEFAULT_PROFILE = 'default';

export const configDir = () => join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'kiln');
export const credentialsFile = () => join(configDir(), 'credentials.yaml');

export async function readConfig(): Promise<CliConfig> {
  let text: string;
  try {
    text = await readFile(credentialsFile(), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  const parsed = YAML.parse(text) as Partial<CliConfig> | null;
  return { current: parsed?.current, profiles: parsed?.profiles ?? {} };
}

export async function writeConfig(config: CliConfig): Promise<void> {
  await mkdir(configDir(), { recursive: true, mode: 0o700 });
  const file = credentialsFile();
  // Written with the mode, and chmod'ed too: a file that existed keeps its old mode on write.
  await writeFile(file, YAML.stringify(config), { mode: 0o600 });
  await chmod(file, 0o600);
}

export async function removeConfig(): Promise<void> {
  await rm(credentialsFile(), { force: true });
}
