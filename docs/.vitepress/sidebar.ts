// The docs site's sidebar: every page, in the order a reader meets them. The examples test
// (test/e2e/docs-examples.test.ts) runs the pages' shell blocks in this order too.

export interface SidebarItem {
  text: string;
  /** The page's path under docs/, without `.md` (`/guides/cli`). */
  link?: string;
  items?: SidebarItem[];
  collapsed?: boolean;
}

export const sidebar: SidebarItem[] = [
  { text: 'Quick start', link: '/quick-start' },
  {
    text: 'Concepts',
    items: [
      { text: 'The deployment lifecycle', link: '/concepts/lifecycle' },
      { text: 'Clusters and placement', link: '/concepts/clusters' },
      { text: 'Models and templates', link: '/concepts/models-and-templates' },
      { text: 'Inference and the gateway', link: '/concepts/inference' },
      { text: 'Autoscaling and scale from zero', link: '/concepts/autoscaling' },
      { text: 'Cost and billing', link: '/concepts/cost-and-billing' },
      { text: 'Organizations and roles', link: '/concepts/organizations' },
      { text: 'API conventions', link: '/concepts/api-conventions' },
    ],
  },
  {
    text: 'Guides',
    items: [
      { text: 'From sign-up to a deployment', link: '/guides/first-deployment' },
      { text: 'The kiln CLI', link: '/guides/cli' },
      { text: 'The TypeScript SDK', link: '/guides/sdk' },
      { text: 'The dashboard', link: '/guides/dashboard' },
      { text: 'Sizing, and the dry run', link: '/guides/sizing' },
      { text: 'Metrics and logs', link: '/guides/metrics-and-logs' },
      { text: 'Alerts, budgets and notifications', link: '/guides/alerts-and-notifications' },
      { text: 'Secrets', link: '/guides/secrets' },
      { text: 'Activity', link: '/guides/activity' },
      { text: 'Live updates', link: '/guides/live-updates' },
      { text: 'GraphQL', link: '/guides/graphql' },
      { text: 'Help and the assistant', link: '/guides/help-and-assistant' },
      { text: 'Bring your own cluster', link: '/guides/own-cluster' },
      { text: 'Single sign-on', link: '/guides/single-sign-on' },
    ],
  },
  {
    text: 'Operating Kiln',
    items: [
      { text: 'Running Kiln', link: '/operating/running-kiln' },
      { text: 'Configuration', link: '/operating/configuration' },
      { text: 'Running at scale', link: '/operating/scale' },
      { text: 'The Temporal UI for SREs', link: '/operating/temporal-ui' },
      { text: 'The Pulumi stacks', link: '/operating/pulumi-stacks' },
      { text: "Kiln's own metrics", link: '/operating/kiln-metrics' },
      { text: 'Platform administration', link: '/operating/administration' },
      { text: 'Backups', link: '/operating/backups' },
    ],
  },
  {
    text: 'Development',
    items: [
      { text: 'Tools', link: '/development/tools' },
      { text: 'Tests and benches', link: '/development/tests-and-benches' },
    ],
  },
  {
    text: 'Architecture',
    items: [
      { text: 'Overview', link: '/architecture/' },
      { text: 'The control plane', link: '/architecture/control-plane' },
      { text: 'Workflows and the worker', link: '/architecture/workflows' },
      { text: 'Stacks, catalog and shared code', link: '/architecture/foundations' },
      { text: 'Clients', link: '/architecture/clients' },
      { text: 'Tools, tests and benches', link: '/architecture/development' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'HTTP API', link: '/api' },
      { text: 'Command line', link: '/reference/cli' },
      { text: 'Configuration', link: '/reference/configuration' },
      { text: 'Webhook events', link: '/reference/events' },
      { text: 'Errors', link: '/reference/errors' },
      { text: 'Control plane areas', link: '/reference/areas' },
    ],
  },
];
