// Lint: typescript-eslint's recommended type-aware rules, plus a ban on Node built-ins in workflow code
// (Temporal workflows must stay deterministic; all I/O belongs in activities).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/'] },
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
    files: ['workflows/**/workflow.ts', 'test/**/*.workflow.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['node:*', 'fs', 'path', 'child_process', 'http', 'https', 'net', 'crypto', 'os'] }],
    },
  },
);
