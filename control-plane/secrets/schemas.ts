import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';
import { SECRET_TYPES } from './organization-secret.entity.ts';

/** What an environment variable name may be, the way a secret is mounted in a deployment's containers. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

const name = z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, `_`, `.` and `-`, starting with a letter or digit')
  .meta({ description: 'Unique in the organization.', example: 'hf-token' });
const secretValue = (description: string) => z.string().min(4).max(4096).meta({ description });
const endpoint = z.url({ protocol: /^https?$/ }).max(2048);

// The credential of each type: every field but the secret one is kept in the clear and shown in the list.
const huggingFace = {
  type: z.literal('huggingface_token'),
  value: secretValue('A Hugging Face access token (`hf_...`).'),
};
const objectStore = {
  type: z.literal('object_store'),
  endpoint: endpoint.meta({ description: 'The S3-compatible endpoint, e.g. `https://s3.us-east-1.amazonaws.com`.', example: 'https://s3.us-east-1.amazonaws.com' }),
  region: z.string().trim().min(1).max(64).default('us-east-1').meta({ description: 'Signing region; `us-east-1` when absent.' }),
  bucket: z.string().trim().min(3).max(63).regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'an S3 bucket name').meta({ description: 'The bucket the credentials are for (a test lists it).' }),
  accessKeyId: z.string().trim().min(4).max(128),
  secretAccessKey: secretValue('The secret access key.'),
};
const registry = {
  type: z.literal('registry_password'),
  registry: endpoint.meta({ description: 'The Docker registry (v2 API), e.g. `https://registry.example.com`.', example: 'https://registry.example.com' }),
  username: z.string().trim().min(1).max(256),
  password: secretValue('The registry password or token.'),
};

export const CreateSecretRequest = z.discriminatedUnion('type', [
  z.strictObject({ name, ...huggingFace }),
  z.strictObject({ name, ...objectStore }),
  z.strictObject({ name, ...registry }),
]).meta({ id: 'CreateSecretRequest', description: 'A secret of one type: its value is sealed and never returned.' });

/** A credential to test without storing it (no name), or a stored one by id. */
export const TestSecretRequest = z.union([
  z.strictObject({ secretId: z.string().min(1).max(64).meta({ example: 'sec_0123456789abcdefghij' }) }),
  z.discriminatedUnion('type', [z.strictObject(huggingFace), z.strictObject(objectStore), z.strictObject(registry)]),
]).meta({ id: 'TestSecretRequest', description: '`{secretId}` tests a stored secret; a credential (as when creating, without name) is tested and not stored.' });

export const ListSecretsQuery = z.strictObject({ ...orgIdQuery, ...pageQuery });

export const SecretIdParams = z.object({ id: z.string().max(64) });

export const SecretView = z.object({
  id: z.string().meta({ example: 'sec_0123456789abcdefghij' }),
  name: z.string(),
  type: z.enum(SECRET_TYPES),
  lastFour: z.string().meta({ description: 'The last four characters of the value: all of it that is ever shown again.' }),
  details: z.record(z.string(), z.string()).meta({ description: 'The fields that are no secret: endpoint, region, bucket (object_store); registry, username (registry_password).' }),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable().meta({ description: 'When a deployment\'s rollout or a test last opened it; null: never.' }),
  usedBy: z.array(z.object({ id: z.string(), name: z.string(), env: z.string() })).meta({ description: 'The deployments (not deleted) that mount it, and as which environment variable.' }),
}).meta({ id: 'Secret' });

export const SecretTestResult = z.object({
  ok: z.boolean().meta({ description: 'Whether the service accepted the credential.' }),
  service: z.string().meta({ description: 'What was asked, e.g. `huggingface.whoami`, `s3.ListObjectsV2`, `registry.v2`.' }),
  detail: z.string().meta({ description: 'What the service answered (who the token belongs to), or why the test failed (refused, unreachable).' }),
}).meta({ id: 'SecretTestResult' });

export const DeletedSecret = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedSecret' });

export type CreateSecretInput = z.output<typeof CreateSecretRequest>;
export type TestSecretInput = z.output<typeof TestSecretRequest>;
export type ListSecretsInput = z.output<typeof ListSecretsQuery>;
export type SecretViewBody = z.infer<typeof SecretView>;
