// `node control-plane/main.ts`: the API server, configured from the environment. It needs DATABASE_URL;
// `npm run api` (infra/api.ts) starts embedded PostgreSQL first when that is unset.
import { ConfigError, exitOnConfigError, exitOnSignals, exitOnStartError, loadConfig } from './config.ts';
import { startApi } from './server.ts';

const config = await loadConfig('api').catch(exitOnConfigError);
const databaseUrl = config.databaseUrl
  ?? exitOnConfigError(new ConfigError('invalid configuration: DATABASE_URL is required (npm run api starts embedded PostgreSQL when it is unset)'));
const api = await startApi({ config: { ...config, databaseUrl } }).catch(exitOnStartError('the API', config.port, 'PORT'));
exitOnSignals(() => api.close());
