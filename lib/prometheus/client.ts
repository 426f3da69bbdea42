// Kiln's door to Prometheus's HTTP API (/api/v1/query, /api/v1/query_range): the metric routes, the
// autoscaler and the alert rules are PromQL queries, and Prometheus keeps the time series. A store that cannot
// be reached, or answers an error, throws PrometheusUnavailableError (the API answers it 503, never 500).

/** Prometheus could not be reached or refused the query. */
export class PrometheusUnavailableError extends Error {
  override readonly name = 'PrometheusUnavailableError';
}

/** One series of a range query: its labels, and [unix seconds, value] points (NaN where PromQL has none). */
export interface RangeSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface RangeQuery {
  readonly start: Date;
  readonly end: Date;
  readonly stepSeconds: number;
}

/** One series of an instant query: its labels and its value now (NaN where PromQL has none). */
export interface InstantSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface PrometheusAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; values?: Array<[number, string]>; value?: [number, string] }> };
}

export function createPrometheusClient(baseUrl: string, timeoutMs = 10_000) {
  async function ask(endpoint: 'query' | 'query_range', params: Record<string, string>): Promise<NonNullable<PrometheusAnswer['data']>['result']> {
    let answer: PrometheusAnswer;
    try {
      const response = await fetch(`${baseUrl}/api/v1/${endpoint}`, {
        method: 'POST', body: new URLSearchParams(params), signal: AbortSignal.timeout(timeoutMs),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      answer = await response.json() as PrometheusAnswer;
    } catch {
      throw new PrometheusUnavailableError('The metrics store (Prometheus) is unavailable: try again shortly');
    }
    if (answer.status !== 'success' || !answer.data) {
      throw new PrometheusUnavailableError(`The metrics store (Prometheus) refused the query: ${answer.error ?? 'no data'}`);
    }
    return answer.data.result;
  }

  return {
    async queryRange(promql: string, range: RangeQuery): Promise<RangeSeries[]> {
      const result = await ask('query_range', {
        query: promql, start: String(range.start.getTime() / 1000), end: String(range.end.getTime() / 1000), step: String(range.stepSeconds),
      });
      return result.map((series) => ({ labels: series.metric, points: (series.values ?? []).map(([time, value]) => [time, Number(value)] as const) }));
    },

    async query(promql: string, at: Date): Promise<InstantSample[]> {
      const result = await ask('query', { query: promql, time: String(at.getTime() / 1000) });
      return result.map((series) => ({ labels: series.metric, value: Number(series.value?.[1]) }));
    },
  };
}

export type PrometheusClient = ReturnType<typeof createPrometheusClient>;
