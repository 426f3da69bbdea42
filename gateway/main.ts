// `npm run gateway`: the inference gateway, configured from the environment (DATABASE_URL and TEMPORAL_ADDRESS of
// the API it serves beside). Run as many as the traffic needs, on any hosts: they share nothing but the database.
import { ConfigError, exitOnConfigError, exitOnSignals, exitOnStartError, loadConfig } from '../control-plane/config.ts';
import { startGateway } from './server.ts';

const config = await loadConfig('gateway').catch(exitOnConfigError);
const databaseUrl = config.databaseUrl ?? exitOnConfigError(new ConfigError('invalid configuration: DATABASE_URL is required by the inference gateway (the API\'s database)'));
const gateway = await startGateway({ config: { ...config, databaseUrl } }).catch(exitOnStartError('the inference gateway', config.port, 'KILN_GATEWAY_PORT'));
exitOnSignals(() => gateway.close());
