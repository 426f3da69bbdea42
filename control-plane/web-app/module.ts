// The web dashboard (web/), served by the API itself at / so `npm start` is all a user needs: its built
// files and the single-page app's fallback for paths no route declares. Off when KILN_WEB_DIST is empty.
import { defineModule } from '../module.ts';
import { serveWebApp } from './static.ts';

export const webAppModule = defineModule({
  name: 'web-app',
  fallback: ({ config }) => (config.webDist ? serveWebApp(config.webDist) : undefined),
});
