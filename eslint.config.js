// Lint: typescript-eslint's recommended type-aware rules, the import rules of ARCHITECTURE.md, and a ban on
// Node built-ins in workflow code (Temporal workflows must stay deterministic; all I/O belongs in activities).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** What no shipping code may import: the stand-in for what a laptop cannot have (the simulated model servers). */
const STAND_INS = { group: ['**/infra/model-server-sim/**'], message: 'Stand-ins live at the edge: nothing that ships imports them (ARCHITECTURE.md).' };
const restrict = (...patterns) => ['error', { patterns: [STAND_INS, ...patterns] }];
/** What workflows/ may not import (workflow.ts files, in addition, no Node built-ins). */
const WORKFLOWS = [
  { group: ['**/infra/**'], message: 'Shipping code does not import development infrastructure (ARCHITECTURE.md).' },
  {
    // The worker shares the control plane's database and configuration, and the circuits' rules with placement.
    regex: 'control-plane/(?!.*\\.entity\\.ts$|database/orm\\.ts$|config\\.ts$|recovery/circuits\\.ts$|billing/credit-ledger\\.ts$)',
    message: 'Workflows use the control plane\'s entities, database, configuration, circuits and credit ledger only (ARCHITECTURE.md).',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'web/dist/', 'client/dist/', 'docs/.vitepress/dist/', 'docs/.vitepress/cache/', 'docs/.temp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['stacks/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        group: ['**/control-plane/**', '**/workflows/**', '**/infra/**', '**/lib/**', '**/test/**'],
        message: 'stacks/ imports only catalog/ and its own components: enterprises run it without Kiln (ARCHITECTURE.md).',
      }),
    },
  },
  {
    files: ['control-plane/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: ['**/stacks/**'], message: 'The API never runs Pulumi: stacks/ is the worker\'s (ARCHITECTURE.md).' },
        { group: ['**/gateway/**'], message: 'The API does not import the gateway: the gateway is built from the API\'s areas (ARCHITECTURE.md).' },
        { regex: '(^|/)workflows/(?!contract/)', message: 'The API sees only the workflows\' contract (ARCHITECTURE.md).' },
        { group: ['**/infra/**'], message: 'Shipping code does not import development infrastructure (ARCHITECTURE.md).' },
      ),
    },
  },
  {
    files: ['gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: ['**/stacks/**'], message: 'The gateway never runs Pulumi (ARCHITECTURE.md).' },
        { regex: '(^|/)workflows/(?!contract/)', message: 'The gateway sees only the workflows\' contract (ARCHITECTURE.md).' },
        { group: ['**/infra/**'], message: 'Shipping code does not import development infrastructure (ARCHITECTURE.md).' },
      ),
    },
  },
  {
    files: ['control-plane/core/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: ['**/stacks/**', '**/infra/**', '**/workflows/**'], message: 'core/ holds what every area shares (ARCHITECTURE.md).' },
        { regex: '^\\.\\./(?!\\.\\./)', message: 'core/ imports no area: the areas import it (ARCHITECTURE.md).' },
      ),
    },
  },
  {
    files: ['control-plane/http/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: ['**/stacks/**', '**/infra/**', '**/workflows/**'], message: 'http/ is HTTP only (ARCHITECTURE.md).' },
        // Middleware names the services it calls by type; the app hands them over.
        { regex: '^\\.\\./(?!core/|\\.\\./)', allowTypeImports: true, message: 'http/ is HTTP only: it uses areas through the services the app gives it (ARCHITECTURE.md).' },
      ),
    },
  },
  {
    files: ['lib/**/*.ts', 'catalog/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        group: ['**/control-plane/**', '**/workflows/**', '**/stacks/**', '**/infra/**', '**/test/**'],
        message: 'lib/ and catalog/ are shared by every side and depend on none of them (ARCHITECTURE.md).',
      }),
    },
  },
  {
    // The SDK is what programs outside Kiln use: its client and the types generated from the OpenAPI document.
    files: ['client/sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        group: ['**/control-plane/**', '**/workflows/**', '**/stacks/**', '**/infra/**', '**/lib/**', '**/catalog/**', '**/test/**', '**/cli/**'],
        message: 'client/sdk/ imports nothing of Kiln but its generated types: it reaches Kiln over HTTP (ARCHITECTURE.md).',
      }),
    },
  },
  {
    files: ['client/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict({
        group: ['**/control-plane/**', '**/workflows/**', '**/stacks/**', '**/infra/**', '**/lib/**', '**/catalog/**', '**/test/**'],
        message: 'client/cli/ uses Kiln through client/sdk/ only, as any client would (ARCHITECTURE.md).',
      }),
    },
  },
  {
    // The dashboard runs in the browser and reaches Kiln as any client does: through the SDK.
    files: ['web/**/*.{ts,tsx}'],
    ignores: ['web/vite.config.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': restrict(
        {
          group: ['**/control-plane/**', '**/workflows/**', '**/stacks/**', '**/infra/**', '**/lib/**', '**/catalog/**', '**/test/**', '**/cli/**', 'node:*'],
          message: 'web/ imports only client/sdk/ and its own files: it uses Kiln over HTTP, in a browser (ARCHITECTURE.md).',
        },
        // The live socket of sdk/live.ts is Node's (the ws library); the browser has its own (web/src/live.ts).
        { group: ['**/sdk/live.ts'], message: 'sdk/live.ts is for Node: the dashboard uses web/src/live.ts (the browser\'s WebSocket with a ticket).' },
      ),
    },
  },
  {
    // The documentation site: pages read Kiln over HTTP (the API reference, its OpenAPI documents) like any reader.
    files: ['docs/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': restrict({
        group: ['**/control-plane/**', '**/workflows/**', '**/stacks/**', '**/infra/**', '**/lib/**', '**/catalog/**', '**/test/**', '**/client/**', '**/web/**'],
        message: 'docs/ imports none of Kiln\'s code: its pages reach Kiln over HTTP, as a reader does (ARCHITECTURE.md).',
      }),
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: { 'no-restricted-imports': restrict(...WORKFLOWS) },
  },
  {
    files: ['workflows/**/workflow.ts', 'workflows/workflow-interceptors.ts', 'test/**/*.workflow.ts'],
    rules: {
      'no-restricted-imports': restrict(...WORKFLOWS, {
        group: ['node:*', 'fs', 'path', 'child_process', 'http', 'https', 'net', 'crypto', 'os'],
        message: 'Workflow code is deterministic: I/O belongs in activities.',
      }),
    },
  },
);
