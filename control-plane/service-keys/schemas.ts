import { z } from 'zod';

const timestamp = z.iso.datetime();

export const CreateServiceKeyRequest = z.strictObject({
  name: z.string().trim().min(1).max(100).meta({ description: 'What the key is for (the server or job that holds it).', example: 'billing-sync' }),
}).meta({ id: 'CreateServiceKeyRequest' });

export const ServiceKeyIdParams = z.object({ id: z.string().max(64).meta({ example: 'svk_0123456789abcdefghij' }) });

export const ServiceKeyView = z.object({
  id: z.string().meta({ example: 'svk_0123456789abcdefghij' }),
  name: z.string(),
  prefix: z.string().meta({ example: 'srk_test_Ab3d' }),
  createdBy: z.string().meta({ description: 'The platform administrator who created the key.' }),
  createdAt: timestamp,
  rotatedAt: timestamp.nullable(),
  lastUsedAt: timestamp.nullable().meta({ description: 'Last request made with the key, to the minute.' }),
}).meta({ id: 'ServiceKey' });

export const ServiceKeyWithValue = ServiceKeyView.extend({
  key: z.string().meta({
    description: 'The full value: shown once, never again. Send it as `Authorization: Bearer <key>` with `X-Organization-ID`, from servers only.',
    example: 'srk_test_0123456789abcdefghijABCDEFGHIJKLMNOPQRST',
  }),
}).meta({ id: 'ServiceKeyWithValue' });

export const RevokedServiceKey = z.object({ id: z.string(), revoked: z.literal(true) }).meta({ id: 'RevokedServiceKey' });

export type CreateServiceKeyInput = z.infer<typeof CreateServiceKeyRequest>;
export type ServiceKeyViewBody = z.infer<typeof ServiceKeyView>;
