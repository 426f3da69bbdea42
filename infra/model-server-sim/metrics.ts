// /metrics of one simulated server, under vLLM's own (v1 engine) metric names and labels, so whatever scrapes
// a real vLLM (Prometheus, an autoscaler, Kiln's gateway) reads the simulator unchanged. Each server has its own
// registry, as each vLLM process has.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FINISH_REASONS, type EngineObserver } from './engine.ts';

// vLLM's bucket boundaries (vllm/v1/metrics/loggers.py).
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const TOKEN_COUNT_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

export interface EngineLoad {
  readonly running: number;
  readonly waiting: number;
  /** Fraction of the KV cache in use, 0 to 1. */
  readonly kvCacheUsage: number;
}

export interface ServerMetrics {
  readonly observer: EngineObserver;
  readonly contentType: string;
  text(): Promise<string>;
}

export function createServerMetrics(modelName: string, load: () => EngineLoad): ServerMetrics {
  const registry = new Registry();
  const labels = { model_name: modelName, engine: '0' };
  const labelNames = ['model_name', 'engine'] as const;
  const registers = [registry];
  const gauge = (name: string, help: string, read: (l: EngineLoad) => number) => new Gauge({
    name, help, labelNames, registers,
    collect() { this.set(labels, read(load())); },
  });
  gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', (l) => l.running);
  gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', (l) => l.waiting);
  gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', (l) => l.kvCacheUsage);
  gauge('vllm:gpu_cache_usage_perc', 'GPU KV-cache usage. 1 means 100 percent usage (deprecated name of vllm:kv_cache_usage_perc).', (l) => l.kvCacheUsage);

  const promptTokens = new Counter({ name: 'vllm:prompt_tokens_total', help: 'Number of prefill tokens processed.', labelNames, registers });
  const generationTokens = new Counter({ name: 'vllm:generation_tokens_total', help: 'Number of generation tokens processed.', labelNames, registers });
  const success = new Counter({ name: 'vllm:request_success_total', help: 'Count of successfully processed requests.', labelNames: [...labelNames, 'finished_reason'], registers });
  const histogram = (name: string, help: string, buckets: number[]) => new Histogram({ name, help, labelNames, buckets, registers });
  const ttft = histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS);
  const e2e = histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LATENCY_BUCKETS);
  const queueTime = histogram('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', LATENCY_BUCKETS);
  const promptSize = histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', TOKEN_COUNT_BUCKETS);
  const generationSize = histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', TOKEN_COUNT_BUCKETS);
  for (const counter of [promptTokens, generationTokens]) counter.inc(labels, 0);
  // As vLLM does, every finish reason's series exists from the start at 0, so the first request shows as a rate.
  for (const reason of FINISH_REASONS) success.inc({ ...labels, finished_reason: reason }, 0);

  return {
    contentType: registry.contentType,
    text: () => registry.metrics(),
    observer: {
      firstToken(request) {
        promptTokens.inc(labels, request.promptTokens);
        ttft.observe(labels, request.ttftSeconds);
      },
      token() { generationTokens.inc(labels); },
      finished(request) {
        // A request aborted before its first token produced nothing to report.
        if (request.reason === 'abort' && request.generatedTokens === 0) return;
        success.inc({ ...labels, finished_reason: request.reason });
        e2e.observe(labels, request.e2eSeconds);
        queueTime.observe(labels, request.queueSeconds);
        promptSize.observe(labels, request.promptTokens);
        generationSize.observe(labels, request.generatedTokens);
      },
    },
  };
}
