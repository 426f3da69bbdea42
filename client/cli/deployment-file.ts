// A kiln.yaml, the file `kiln apply` reads: its fields, checked before Kiln sees them, and which of them
// differ from a deployment as it is.
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import { usage } from './errors.ts';
import { readStdin } from './input.ts';
import type { Deployment } from './session.ts';

/** The fields a kiln.yaml may set, as the deployment API names them. */
const FILE_FIELDS = ['name', 'model', 'runtime', 'gpu', 'replicas', 'minReplicas', 'maxReplicas', 'autoscaling', 'gpusPerReplica', 'contextLength', 'dtype', 'vllmArgs'] as const;
type DeploymentFile = { name: string } & Partial<Record<(typeof FILE_FIELDS)[number], unknown>>;

export async function readDeploymentFile(path: string): Promise<DeploymentFile> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    throw usage(`Cannot read ${path}: ${(error as Error).message}`, 'Give the file with -f, e.g. `kiln apply -f kiln.yaml`.');
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (error) {
    throw usage(`${path} is not valid YAML: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usage(`${path} must be a mapping of fields (name, model, gpu, ...)`);
  const unknown = Object.keys(parsed).filter((k) => !(FILE_FIELDS as readonly string[]).includes(k));
  if (unknown.length) throw usage(`${path}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`, `A kiln.yaml may set ${FILE_FIELDS.join(', ')}.`);
  const file = parsed as DeploymentFile;
  if (typeof file.name !== 'string' || !file.name) throw usage(`${path}: name is required`);
  return file;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** Autoscaling given in part: the settings left out keep the deployment's. */
export const differs = (key: string, wanted: unknown, current: Deployment) => {
  const now = (current as Record<string, unknown>)[key];
  if (key === 'autoscaling' && wanted && typeof wanted === 'object') return !same({ ...(now as object), ...wanted }, now);
  return !same(wanted, now);
};
