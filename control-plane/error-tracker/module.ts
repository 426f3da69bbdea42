// Unhandled errors, grouped into issues for platform administrators (and forwarded to an external tracker).
import { defineModule } from '../module.ts';
import { createErrorTracker, type ErrorTracker } from './service.ts';

declare module '../module.ts' {
  interface Services { errorTracker: ErrorTracker }
}

export const errorTrackerModule = defineModule({
  name: 'error-tracker',
  services: ({ orm, log, cursors, config }) => ({
    errorTracker: createErrorTracker({ orm, log, cursors, forwardUrl: config.errorTrackerUrl, environment: config.env }),
  }),
});
