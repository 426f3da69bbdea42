// One simulated vLLM server (what one pod would run): an HTTP listener on the pod's IP and port with vLLM's
// routes, its engine, its /metrics and its log. A simulation for laptops and tests; a real cluster runs vLLM.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createEngine, type EngineTiming } from './engine.ts';
import { createServerMetrics } from './metrics.ts';
import { openAiApi, sendError, sendJson, type ServedModel } from './openai-api.ts';
import { openServerLog } from './server-log.ts';

export interface ModelServerConfig {
  readonly host: string;
  readonly port: number;
  /** vLLM's --model. */
  readonly model: string;
  /** vLLM's --served-model-name values; `model` when empty. */
  readonly servedModelNames: readonly string[];
  readonly maxModelLen: number;
  readonly tensorParallelSize: number;
  /** The vLLM version the server claims (/version, logs). */
  readonly version: string;
  readonly timing: EngineTiming;
  readonly logFile: string;
  /** How often the throughput line is logged (vLLM: every 10 s). */
  readonly statsIntervalMs: number;
}

export interface ModelServer {
  /** `host:port` it answers on. */
  readonly address: string;
  /** Stops listening and drops open connections, as a killed vLLM process would. */
  close(): Promise<void>;
}

/** Tokens a request may keep in the simulated KV cache, per place in the batch; sets vllm:kv_cache_usage_perc's scale. */
const KV_TOKENS_PER_SLOT = 4096;

export async function startModelServer(config: ModelServerConfig): Promise<ModelServer> {
  const log = await openServerLog(config.logFile);
  const names = config.servedModelNames.length ? config.servedModelNames : [config.model];
  const model: ServedModel = { names, root: config.model, maxModelLen: config.maxModelLen, created: Math.floor(Date.now() / 1000) };
  const kvCapacity = config.timing.maxConcurrency * KV_TOKENS_PER_SLOT;
  const load = () => ({ running: engine.running, waiting: engine.waiting, kvCacheUsage: Math.min(1, engine.cachedTokens / kvCapacity) });
  const metrics = createServerMetrics(names[0]!, load);
  const throughput = { prompt: 0, generation: 0 };
  const engine = createEngine(config.timing, {
    firstToken(r) { throughput.prompt += r.promptTokens; metrics.observer.firstToken(r); },
    token() { throughput.generation++; metrics.observer.token(); },
    finished(r) { metrics.observer.finished(r); },
  });
  const api = openAiApi(model, engine, log);

  const routes: Record<string, Record<string, (req: IncomingMessage, res: ServerResponse) => unknown>> = {
    '/health': { GET: (_req, res) => res.writeHead(200).end() },
    '/ping': { GET: (_req, res) => res.writeHead(200).end(), POST: (_req, res) => res.writeHead(200).end() },
    '/version': { GET: (_req, res) => sendJson(res, 200, { version: config.version }) },
    '/metrics': {
      GET: async (_req, res) => {
        const text = await metrics.text();
        res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
      },
    },
    '/v1/models': { GET: (_req, res) => api.models(res) },
    '/v1/completions': { POST: (req, res) => api.completions(req, res) },
    '/v1/chat/completions': { POST: (req, res) => api.chatCompletions(req, res) },
  };

  const server = createServer((req, res) => {
    res.setHeader('server', 'uvicorn');
    res.once('close', () => log.access({ address: req.socket.remoteAddress, port: req.socket.remotePort }, req.method ?? 'GET', req.url ?? '/', res.statusCode));
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    const route = routes[path];
    const handler = route?.[req.method ?? 'GET'];
    if (!handler) {
      sendJson(res, route ? 405 : 404, { detail: route ? 'Method Not Allowed' : 'Not Found' });
      return;
    }
    Promise.resolve(handler(req, res)).catch((error: Error) => {
      log.error('api_server.py:1100', `Error handling ${req.method} ${path}: ${error.message}`);
      if (!res.headersSent) sendError(res, 500, 'InternalServerError', error.message);
      else res.destroy(error);
    });
  });

  const args = { model: config.model, tensor_parallel_size: config.tensorParallelSize, max_model_len: config.maxModelLen, ...(config.servedModelNames.length ? { served_model_name: config.servedModelNames } : {}) };
  log.info('api_server.py:1839', `vLLM API server version ${config.version}`);
  log.info('utils.py:233', `non-default args: ${JSON.stringify(args)}`);
  log.info('model-server-sim', 'This is Kiln\'s simulated vLLM (infra/model-server-sim): no weights are loaded and answers are made-up text. A real cluster runs vLLM.');
  log.info('model.py:547', `Resolved architecture: SimulatedForCausalLM`);
  log.info('model.py:1510', `Using max model len ${config.maxModelLen}`);
  log.info('kv_cache_utils.py:1087', `GPU KV cache size: ${kvCapacity} tokens`);
  log.info('kv_cache_utils.py:1091', `Maximum concurrency for ${config.maxModelLen} tokens per request: ${config.timing.maxConcurrency}.00x`);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: config.host, port: config.port }, () => { server.off('error', reject); resolve(); });
  }).catch(async (error: Error) => {
    log.error('api_server.py:1900', `Could not listen on ${config.host}:${config.port}: ${error.message}`);
    await log.close();
    throw error;
  });
  // The pod's own address is what clients reach; vLLM says 0.0.0.0 as it binds every address of its pod.
  log.info('api_server.py:1912', `Starting vLLM API server 0 on http://0.0.0.0:${config.port}`);
  log.info('launcher.py:34', 'Available routes are:');
  for (const [path, methods] of Object.entries(routes)) log.info('launcher.py:42', `Route: ${path}, Methods: ${Object.keys(methods).join(', ')}`);
  log.raw(`INFO:     Started server process [${process.pid}]`);
  log.raw('INFO:     Waiting for application startup.');
  log.raw('INFO:     Application startup complete.');

  // vLLM's periodic stats line; like vLLM it stays quiet while the engine is idle.
  let wasIdle = true;
  const stats = setInterval(() => {
    const seconds = config.statsIntervalMs / 1000;
    const { running, waiting, kvCacheUsage } = load();
    const idle = throughput.prompt === 0 && throughput.generation === 0 && running === 0 && waiting === 0;
    if (!(idle && wasIdle)) {
      log.info('loggers.py:123', `Engine 000: Avg prompt throughput: ${(throughput.prompt / seconds).toFixed(1)} tokens/s, `
        + `Avg generation throughput: ${(throughput.generation / seconds).toFixed(1)} tokens/s, Running: ${running} reqs, Waiting: ${waiting} reqs, `
        + `GPU KV cache usage: ${(kvCacheUsage * 100).toFixed(1)}%, Prefix cache hit rate: 0.0%`);
    }
    wasIdle = idle;
    throughput.prompt = 0;
    throughput.generation = 0;
  }, config.statsIntervalMs);
  stats.unref();

  return {
    address: `${config.host}:${config.port}`,
    async close() {
      clearInterval(stats);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      log.raw('INFO:     Shutting down');
      log.raw(`INFO:     Finished server process [${process.pid}]`);
      await log.close();
    },
  };
}
