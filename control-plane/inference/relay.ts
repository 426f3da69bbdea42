// Relays a model server's answer to the client as it comes, reading it on the side for what the audit
// record needs: the token counts of the OpenAI `usage` object. An event stream's counts come in its final
// chunk, which Kiln always asks for (`stream_options.include_usage`) and removes again when the client did
// not ask for it.
import { StringDecoder } from 'node:string_decoder';
import { Transform } from 'node:stream';

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface RelayOutcome {
  /** null when the answer carried none (cut off, or a server that does not count). */
  readonly usage: Usage | null;
  /** The whole answer went through; false when it was cut off (client gone, model server failed). */
  readonly completed: boolean;
}

export interface Relay {
  readonly stream: Transform;
  /** Settles when the stream closes, either way; never rejects. */
  readonly outcome: Promise<RelayOutcome>;
}

/** A line or event longer than this is passed on unread: no answer makes the gateway hold unbounded text. */
const MAX_HELD_CHARS = 1 << 20;
/** A JSON answer is read for its usage up to this size (far beyond any completion's). */
const MAX_JSON_BYTES = 16 << 20;

export function usageOf(value: unknown): Usage | undefined {
  const usage = (value as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null } | null)?.usage;
  if (typeof usage?.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') return undefined;
  return { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
}

function settle(stream: Transform, read: () => RelayOutcome): Promise<RelayOutcome> {
  return new Promise((resolve) => stream.once('close', () => resolve(read())));
}

/**
 * An event stream (`data: <json>` events, then `data: [DONE]`). Without `stripUsageChunk`, every byte goes
 * on at once and the events are read from a copy; with it, each event goes on once complete, except the
 * usage-only chunk. `onChunk` sees every JSON chunk (the inference test times them).
 */
export function sseRelay(options: { stripUsageChunk: boolean; onChunk?: (chunk: unknown) => void }): Relay {
  const decoder = new StringDecoder('utf8');
  let line = '';
  /** The raw text of the event being read (strip mode only). */
  let event = '';
  let eventIsUsageOnly = false;
  let usage: Usage | null = null;
  let completed = false;

  /** Reads one `data:` payload; answers whether it is the usage-only chunk. */
  const read = (payload: string): boolean => {
    if (payload === '[DONE]' || !(options.onChunk || payload.includes('"usage"'))) return false;
    let chunk: unknown;
    try { chunk = JSON.parse(payload); } catch { return false; }
    options.onChunk?.(chunk);
    const counted = usageOf(chunk);
    if (!counted) return false;
    usage = counted;
    const choices = (chunk as { choices?: unknown }).choices;
    return Array.isArray(choices) && choices.length === 0;
  };

  const take = (text: string, push: (text: string) => void) => {
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; start = end + 1, end = text.indexOf('\n', start)) {
      const whole = line + text.slice(start, end + 1);
      line = '';
      const content = whole.replace(/\r?\n$/, '');
      if (content.startsWith('data:') && read(content.slice(5).trim())) eventIsUsageOnly = true;
      if (!options.stripUsageChunk) continue;
      event += whole;
      // A blank line ends the event.
      if (content === '') {
        if (!eventIsUsageOnly) push(event);
        event = '';
        eventIsUsageOnly = false;
      }
    }
    line += text.slice(start);
    if (line.length > MAX_HELD_CHARS) {
      if (options.stripUsageChunk) push(event + line);
      line = '';
      event = '';
    }
  };

  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!options.stripUsageChunk) this.push(chunk);
      take(decoder.write(chunk), (text) => this.push(text));
      callback();
    },
    flush(callback) {
      take(decoder.end(), (text) => this.push(text));
      // An unterminated last line and event: read, and passed on as they are.
      if (line.startsWith('data:') && read(line.slice(5).trim())) eventIsUsageOnly = true;
      if (options.stripUsageChunk && event + line && !eventIsUsageOnly) this.push(event + line);
      completed = true;
      callback();
    },
  });
  return { stream, outcome: settle(stream, () => ({ usage, completed })) };
}

/** A JSON answer: passed on at once, chunk by chunk, and read for its usage once whole. */
export function jsonRelay(): Relay {
  const copy: Buffer[] = [];
  let copied = 0;
  let usage: Usage | null = null;
  let completed = false;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      copied += chunk.length;
      if (copied <= MAX_JSON_BYTES) copy.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      if (copied <= MAX_JSON_BYTES) {
        try { usage = usageOf(JSON.parse(Buffer.concat(copy).toString('utf8'))) ?? null; } catch { /* not JSON: no usage */ }
      }
      completed = true;
      callback();
    },
  });
  return { stream, outcome: settle(stream, () => ({ usage, completed })) };
}
