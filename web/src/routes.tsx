// Every page of the dashboard, in one list: the router, the left navigation and the document title are built
// from it. Adding a page: a file in pages/ whose default export is the component, and one line here.
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/** The navigation's groups, in the order they are shown. */
export const NAV_GROUPS = ['Overview', 'Deploy', 'Observe', 'Organization', 'Settings', 'Administration'] as const;
export type NavGroup = (typeof NAV_GROUPS)[number];

export interface PageRoute {
  /** A react-router path: '/deployments/:id'. */
  path: string;
  /** The navigation's label and the default document title. */
  title: string;
  /** Listed in the left navigation under this group (Administration: to platform administrators only); absent: reachable by links only (detail pages). */
  nav?: NavGroup;
  /** Shown without a session, outside the app's shell (sign-in, sign-up). */
  public?: boolean;
  /** Loaded when first visited, so the first page stays small. */
  component: LazyExoticComponent<ComponentType>;
}

export const ROUTES: readonly PageRoute[] = [
  { path: '/', title: 'Home', nav: 'Overview', component: lazy(() => import('./pages/Home.tsx')) },
  { path: '/deployments', title: 'Deployments', nav: 'Deploy', component: lazy(() => import('./pages/Deployments.tsx')) },
  { path: '/deployments/new', title: 'New deployment', component: lazy(() => import('./pages/DeploymentNew.tsx')) },
  { path: '/deployments/:id', title: 'Deployment', component: lazy(() => import('./pages/DeploymentDetail.tsx')) },
  { path: '/models', title: 'Models', nav: 'Deploy', component: lazy(() => import('./pages/Models.tsx')) },
  { path: '/models/:id', title: 'Model', component: lazy(() => import('./pages/Model.tsx')) },
  { path: '/templates', title: 'Templates', nav: 'Deploy', component: lazy(() => import('./pages/Templates.tsx')) },
  { path: '/templates/:id', title: 'Template', component: lazy(() => import('./pages/Template.tsx')) },
  { path: '/alerts', title: 'Alerts', nav: 'Observe', component: lazy(() => import('./pages/Alerts.tsx')) },
  { path: '/budgets', title: 'Budgets', nav: 'Observe', component: lazy(() => import('./pages/Budgets.tsx')) },
  { path: '/admin', title: 'Operations', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminOperations.tsx')) },
  { path: '/admin/organizations', title: 'Organizations', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminOrganizations.tsx')) },
  { path: '/admin/revenue', title: 'Revenue', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminRevenue.tsx')) },
  { path: '/admin/feature-flags', title: 'Feature flags', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminFeatureFlags.tsx')) },
  { path: '/admin/announcements', title: 'Announcements', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminAnnouncements.tsx')) },
  { path: '/admin/reports', title: 'Reports', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminReports.tsx')) },
  { path: '/admin/clusters', title: 'Clusters', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminClusters.tsx')) },
  { path: '/admin/service-keys', title: 'Service keys', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminServiceKeys.tsx')) },
  { path: '/admin/bulk-actions', title: 'Bulk actions', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminBulkActions.tsx')) },
  { path: '/admin/audit', title: 'Audit log', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminAudit.tsx')) },
  { path: '/admin/security', title: 'Security', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminSecurity.tsx')) },
  { path: '/admin/analytics', title: 'Analytics', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminAnalytics.tsx')) },
  { path: '/admin/errors', title: 'Errors', nav: 'Administration', component: lazy(() => import('./pages/admin/AdminErrors.tsx')) },
  { path: '/settings/api-keys', title: 'API keys', nav: 'Settings', component: lazy(() => import('./pages/ApiKeys.tsx')) },
  { path: '/team', title: 'Team', nav: 'Organization', component: lazy(() => import('./pages/Team.tsx')) },
  { path: '/billing', title: 'Billing', nav: 'Organization', component: lazy(() => import('./pages/Billing.tsx')) },
  { path: '/notifications', title: 'Notifications', nav: 'Organization', component: lazy(() => import('./pages/Notifications.tsx')) },
  { path: '/settings/general', title: 'Profile and organization', nav: 'Settings', component: lazy(() => import('./pages/Settings.tsx')) },
  { path: '/settings/profile/verify-email', title: 'Confirm your e-mail address', component: lazy(() => import('./pages/VerifyEmail.tsx')) },
  { path: '/invite/:token', title: 'Join an organization', public: true, component: lazy(() => import('./pages/AcceptInvitation.tsx')) },
  { path: '/sign-in', title: 'Sign in', public: true, component: lazy(() => import('./pages/SignIn.tsx')) },
  { path: '/sign-in/sso', title: 'Sign in with SSO', public: true, component: lazy(() => import('./pages/SsoSignIn.tsx')) },
  { path: '/sign-up', title: 'Sign up', public: true, component: lazy(() => import('./pages/SignUp.tsx')) },
];
