// Live updates: a WebSocket per client (GET /v1/ws) fed from a bounded event log through PostgreSQL
// LISTEN/NOTIFY, so every API replica delivers every event, whichever process caused it. The module attaches
// the service to the HTTP server as the app starts, and closes its sockets as the server begins to close
// (they would hold it open).
import { defineModule } from '../module.ts';
import { createLiveHub } from './hub.ts';
import { liveUpdatesRoutes } from './routes.ts';
import { createLiveUpdatesService, type LiveUpdatesService } from './service.ts';

declare module '../module.ts' {
  interface Services { liveUpdates: LiveUpdatesService }
}

export const liveUpdatesModule = defineModule({
  name: 'live-updates',
  services: ({ pool, log, config }) => ({
    liveUpdates: createLiveUpdatesService(createLiveHub({ pool, log, settings: config.liveUpdates }), log),
  }),
  routes: ({ services, pool }) => liveUpdatesRoutes(services.liveUpdates, pool),
  start: ({ services, server, app }) => services.liveUpdates.attach(server, app),
  preClose: ({ liveUpdates }) => liveUpdates.close(),
});
