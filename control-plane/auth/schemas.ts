import { z } from 'zod';

const email = z.email().max(254).meta({ example: 'ada@example.com' });
const password = z.string().min(8).max(256).meta({ description: 'At least 8 characters.' });

export const SignupRequest = z.object({
  email,
  password,
  name: z.string().trim().min(1).max(200),
  organizationName: z.string().trim().min(1).max(200),
}).meta({ id: 'SignupRequest' });

export const SigninRequest = z.object({ email: z.string().max(254), password: z.string().max(256) }).meta({ id: 'SigninRequest' });

export const ChangePasswordRequest = z.strictObject({
  currentPassword: z.string().max(256).meta({ description: 'The password you sign in with now.' }),
  newPassword: password,
}).meta({ id: 'ChangePasswordRequest' });

export const RefreshRequest = z.object({ refresh_token: z.string().max(512) }).meta({ id: 'RefreshRequest' });

export const TokenPair = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int().meta({ example: 3600 }),
  token_type: z.literal('bearer'),
}).meta({ id: 'TokenPair' });

export const LoginSession = TokenPair.extend({
  user: z.object({ id: z.string(), email: z.string(), organization_id: z.string() }),
}).meta({ id: 'LoginSession' });

export type SignupInput = z.infer<typeof SignupRequest>;
export type SigninInput = z.infer<typeof SigninRequest>;
export type ChangePasswordInput = z.infer<typeof ChangePasswordRequest>;
export type LoginSessionBody = z.infer<typeof LoginSession>;
export type TokenPairBody = z.infer<typeof TokenPair>;
