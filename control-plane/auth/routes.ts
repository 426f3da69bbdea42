// Sign-up and sign-in (reference API), login and refresh (platform API), and a signed-in user's password change.
import { defineRoute, type Route } from '../http/routes.ts';
import { ChangePasswordRequest, LoginSession, RefreshRequest, SigninRequest, SignupRequest, TokenPair } from './schemas.ts';
import type { AuthService } from './service.ts';

const common = { tag: 'Authentication', resourceType: 'session' } as const;

export function authRoutes(auth: AuthService): Route[] {
  const signin = (path: string, operationId: string) => defineRoute({
    ...common, permission: 'public', method: 'POST', path, operationId, summary: 'Sign in with email and password',
    body: SigninRequest, response: LoginSession, errors: [401, 429],
    handle: async ({ body, state }) => ({ data: await auth.signin(state.em, body) }),
  });
  return [
    defineRoute({
      ...common, permission: 'public', method: 'POST', path: '/v1/auth/signup', operationId: 'signup',
      summary: 'Create a user, an organization (free plan) and its owner membership; answers with a login session',
      body: SignupRequest, response: LoginSession, successStatus: 201, idempotent: true, errors: [409, 422],
      handle: async ({ body, state }) => ({ data: await auth.signup(state.em, body) }),
    }),
    signin('/v1/auth/signin', 'signin'),
    signin('/api/auth/login', 'login'),
    defineRoute({
      tag: 'Authentication', resourceType: 'user', permission: 'profile:write', method: 'POST', path: '/v1/auth/password', operationId: 'changePassword',
      summary: 'Change your password (the current one is asked); every other session of yours is signed out and the answer is a new session',
      body: ChangePasswordRequest, response: LoginSession, errors: [403, 422, 429],
      async handle({ body, state }) {
        state.resourceId = state.principal!.userId;
        return { data: await auth.changePassword(state.em, state.principal!, body) };
      },
    }),
    defineRoute({
      ...common, permission: 'public', method: 'POST', path: '/api/auth/refresh', operationId: 'refresh', summary: 'Rotate a refresh token',
      body: RefreshRequest, response: TokenPair, errors: [401],
      handle: async ({ body, state }) => ({ data: await auth.refresh(state.em, body.refresh_token) }),
    }),
  ];
}
