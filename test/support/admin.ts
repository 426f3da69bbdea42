// The platform administrator of a test API: startTestApi lists admin@kiln.test in KILN_ADMIN_EMAILS.
import { startTestApi, type TestApi } from './control-plane.ts';

export const ADMIN_EMAIL = 'admin@kiln.test';

/** Signs up admin@kiln.test (once per test database) with an organization of its own. */
export async function signupAdmin(api: TestApi) {
  const res = await api.request('POST', '/v1/auth/signup', {
    body: { email: ADMIN_EMAIL, password: 'correct horse battery', name: 'Platform admin', organizationName: 'Kiln operations' },
  });
  if (res.status !== 201) throw new Error(`admin signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.access_token as string, userId: res.body.user.id as string, organizationId: res.body.user.organization_id as string };
}

export type Admin = Awaited<ReturnType<typeof signupAdmin>>;

/** A test API for one test file, with its platform administrator signed up. */
export async function startAdminApi(filename: string, overrides: Parameters<typeof startTestApi>[1] = {}): Promise<{ api: TestApi; admin: Admin }> {
  const api = await startTestApi(filename, overrides);
  return { api, admin: await signupAdmin(api) };
}
