// The reference API's `orgId` query parameter, the organization a call acts in (http/authenticate.ts
// resolves it: the credential's own organization or another the caller belongs to, else 403). The
// reference tables list it on some rows, and every query parameter they list is required: those rows
// spread `orgIdQuery`; Kiln's other reference rows accept it as an optional selector, `optionalOrgIdQuery`.
import { z } from 'zod';

const orgId = z.string({ error: (issue) => (issue.input === undefined ? 'required' : 'expected a string') })
  .min(1, 'required')
  .meta({ description: 'The organization to act in: the credential\'s own, or another the caller belongs to.', example: 'org_0123456789abcdefghij' });

export const orgIdQuery = { orgId };

export const optionalOrgIdQuery = { orgId: orgId.optional() };
