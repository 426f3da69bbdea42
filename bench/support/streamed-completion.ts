// What the inference benches measure of one streamed chat completion, and how they summarise many: shared so
// that `bench:e2e` and `bench:inference` time the first token the same way.

/** The value at percentile `p` (nearest rank) of `values`. */
export const percentile = (values: readonly number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))]!;

/**
 * One streamed chat completion, read to its end (the next request starts on an idle connection and an idle
 * model server): ms from sending it to the first event carrying generated text, and tokens per second after it.
 */
export async function streamedCompletion(url: string, body: unknown, token?: string): Promise<{ ttft: number; tokensPerSecond: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (response.status !== 200 || !response.body) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  let first = 0;
  let tokens = 0;
  let buffered = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    const events = buffered.split('\n\n');
    buffered = events.pop()!;
    for (const event of events) {
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const delta = (JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
      if (!delta) continue;
      tokens += 1;
      if (!first) first = performance.now();
    }
  }
  if (!first) throw new Error(`${url}: the stream carried no token`);
  const ended = performance.now();
  return { ttft: first - started, tokensPerSecond: tokens > 1 ? ((tokens - 1) * 1000) / (ended - first) : 0 };
}
