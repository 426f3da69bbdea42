// Live updates: a WebSocket per client (GET /v1/ws) fed from a bounded event log through PostgreSQL
// LISTEN/NOTIFY, so every API replica delivers every event, whichever process caused it. server.ts attaches
// the service to the HTTP server once it listens and closes it before the server stops.
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
  close: (services) => services.liveUpdates.close(),
});
