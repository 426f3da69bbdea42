// The kinds of identity provider Kiln knows. All speak OpenID Connect and take the same flow; the presets
// only tell an administrator what the issuer looks like and what to register at the provider.
export const SSO_PROVIDER_KINDS = ['oidc', 'okta', 'azure-ad', 'google-workspace'] as const;
export type SsoProviderKind = (typeof SSO_PROVIDER_KINDS)[number];

export interface SsoProviderPreset {
  id: SsoProviderKind;
  name: string;
  /** The issuer with `{placeholders}` to fill in; null when any OpenID Connect issuer fits. */
  issuerTemplate: string | null;
  parameters: string[];
  notes: string;
}

export const SSO_PROVIDERS: readonly SsoProviderPreset[] = [
  {
    id: 'oidc', name: 'OpenID Connect (any provider)', issuerTemplate: null, parameters: [],
    notes: 'Any issuer that publishes /.well-known/openid-configuration over https and supports the authorization code flow with PKCE (S256).',
  },
  {
    id: 'okta', name: 'Okta', issuerTemplate: 'https://{oktaDomain}', parameters: ['oktaDomain'],
    notes: 'Create an OIDC Web Application with the grant type Authorization Code. For a custom authorization server the issuer is https://{oktaDomain}/oauth2/{authorizationServerId}.',
  },
  {
    id: 'azure-ad', name: 'Microsoft Entra ID (Azure AD)', issuerTemplate: 'https://login.microsoftonline.com/{tenantId}/v2.0', parameters: ['tenantId'],
    notes: 'Register an application with a Web redirect URI and a client secret; add the optional claim `email` to the ID token, or Kiln reads it from the userinfo endpoint.',
  },
  {
    id: 'google-workspace', name: 'Google Workspace', issuerTemplate: 'https://accounts.google.com', parameters: [],
    notes: 'Create an OAuth client of type Web application; list your Workspace domains as allowed e-mail domains.',
  },
];
