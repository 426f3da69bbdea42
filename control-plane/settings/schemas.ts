import { z } from 'zod';
import { REGIONS, UNVERIFIED_MODELS_POLICIES } from '../organizations/organization.entity.ts';
import { PLANS } from '../../catalog/plans.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { PERMISSIONS } from '../core/permissions.ts';

const email = z.email().max(254).meta({ example: 'ada@example.com' });

export const SettingsQuery = z.object(orgIdQuery);

export const ProfileView = z.object({
  id: z.string().meta({ example: 'usr_0123456789abcdefghij' }),
  name: z.string(),
  email: z.string().meta({ description: 'The confirmed address: sign-in and mail use it.' }),
  pendingEmail: z.string().nullable().meta({ description: 'A new address waiting for confirmation through the token mailed to it.' }),
  createdAt: z.iso.datetime(),
  role: z.string().meta({ description: 'Your role in the organization the call acts in: owner, admin, member, viewer or a custom role\'s id.', example: 'member' }),
  permissions: z.array(z.enum(PERMISSIONS)).meta({ description: 'What you may do there with the credential of this call: your role\'s permissions narrowed by the credential\'s scope (admin:* for platform administrators). Clients hide what the API would refuse; the API still checks every call.' }),
  platformAdmin: z.boolean().meta({ description: 'Listed among the platform administrators (KILN_ADMIN_EMAILS).' }),
}).meta({ id: 'Profile' });

export const UpdateProfileRequest = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  email: email.optional().meta({
    description: 'A new address stays pending until confirmed with POST /v1/settings/profile/verify-email and the token mailed to it (valid 24 hours).',
  }),
}).meta({ id: 'UpdateProfileRequest' });

export const VerifyEmailRequest = z.object({
  token: z.string().max(256).meta({ description: 'The token from the confirmation e-mail.' }),
}).meta({ id: 'VerifyEmailRequest' });

const unverifiedModels = z.enum(UNVERIFIED_MODELS_POLICIES).meta({
  description: 'What creating a deployment does when its model check cannot run (the Hugging Face Hub unreachable): `allow` (the default) creates it, '
    + 'the check reported `unverified` with the reason in the answer\'s notices and the dry run; `refuse` answers 422 naming the model and the reason, and creates nothing.',
  example: 'allow',
});

export const OrganizationView = z.object({
  id: z.string().meta({ example: 'org_0123456789abcdefghij' }),
  name: z.string(),
  slug: z.string().meta({ example: 'engines' }),
  contactEmail: z.string().nullable(),
  defaultRegion: z.enum(REGIONS),
  plan: z.enum(PLANS).meta({ description: 'Read-only here: it changes through billing.' }),
  unverifiedModels: unverifiedModels,
  createdAt: z.iso.datetime(),
}).meta({ id: 'OrganizationSettings' });

export const UpdateOrganizationRequest = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  slug: z.string().min(3).max(63).regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lower-case letters, digits and inner hyphens only (a DNS label)')
    .optional().meta({ description: 'Unique across Kiln; 3 to 63 characters, a DNS label.', example: 'engines' }),
  contactEmail: email.nullable().optional().meta({ description: 'null clears it.' }),
  defaultRegion: z.enum(REGIONS).optional(),
  unverifiedModels: unverifiedModels.optional(),
  plan: z.enum(PLANS).optional().meta({
    description: 'Read-only: the current plan is accepted (so a read-modify-write round trip works), any other value is 422.',
  }),
}).meta({ id: 'UpdateOrganizationRequest' });

export type ProfileViewBody = z.infer<typeof ProfileView>;
export type UpdateProfileInput = z.infer<typeof UpdateProfileRequest>;
export type OrganizationViewBody = z.infer<typeof OrganizationView>;
export type UpdateOrganizationInput = z.infer<typeof UpdateOrganizationRequest>;
