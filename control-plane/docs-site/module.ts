// The documentation site (docs/, built with VitePress), served by the API itself at /docs beside the API it
// describes, so its API reference tries requests against this Kiln. Off when KILN_DOCS_DIST is empty.
import { defineModule } from '../module.ts';
import { serveDocsSite } from './static.ts';

export const docsSiteModule = defineModule({
  name: 'docs-site',
  fallback: ({ config }) => (config.docsDist ? serveDocsSite(config.docsDist) : undefined),
});
