// The documentation site (VitePress), built by `npm run build:docs` into docs/.vitepress/dist, which Kiln
// serves at /docs (control-plane/docs-site/). A dead link fails the build (VitePress's default, kept).
// `npm run docs:dev` serves it with hot reload, passing the API's paths to the API that `npm start` runs.
import { defineConfig } from 'vitepress';
import { kilnLinks } from './kiln-links.ts';
import { sidebar } from './sidebar.ts';

const api = process.env.KILN_API_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: '/docs/',
  title: 'Kiln',
  description: 'Deploy and run AI models (vLLM) on GPU infrastructure.',
  lang: 'en',
  cleanUrls: true,
  markdown: { config: (md) => md.use(kilnLinks) },
  // Swagger UI is one chunk of about 1.6 MB, loaded by the API page alone.
  vite: { build: { chunkSizeWarningLimit: 2000 }, server: { proxy: { '/api': api, '/v1': api } } },
  themeConfig: {
    nav: [
      { text: 'API', link: '/api' },
      { text: 'Reference', items: [
        { text: 'Command line', link: '/reference/cli' },
        { text: 'Configuration', link: '/reference/configuration' },
        { text: 'Webhook events', link: '/reference/events' },
      ] },
    ],
    sidebar,
    search: { provider: 'local' },
    outline: 'deep',
  },
});
