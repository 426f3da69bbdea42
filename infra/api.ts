// `npm run api`: the API server alone, as control-plane/main.ts runs it, on embedded PostgreSQL under
// DATA_DIR when DATABASE_URL is unset. Temporal and the worker are expected at TEMPORAL_ADDRESS.
import { exitOnConfigError, exitOnSignals, exitOnStartError, loadConfig } from '../control-plane/config.ts';
import { startApi } from '../control-plane/server.ts';
import { startPostgres } from './servers/postgres.ts';

const config = await loadConfig('api').catch(exitOnConfigError);
const postgres = config.databaseUrl ? undefined : await startPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort })
  .catch(exitOnStartError('PostgreSQL', config.embeddedPostgresPort, 'KILN_POSTGRES_PORT'));
const api = await startApi({ config: { ...config, databaseUrl: config.databaseUrl ?? postgres!.url } }).catch(async (error: NodeJS.ErrnoException) => {
  await postgres?.stop();
  return exitOnStartError('the API', config.port, 'PORT')(error);
});
exitOnSignals(async () => {
  await api.close();
  await postgres?.stop();
});
