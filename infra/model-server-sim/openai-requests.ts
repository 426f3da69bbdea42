// Reading the bodies of OpenAI-style completion requests as vLLM's server does: the fields vLLM checks are
// checked with its messages (a 400 either way); sampling settings the simulator has no use for (temperature,
// top_p, seed, ...) are accepted and ignored.
import { countTokens } from './tokens.ts';

export class BadRequest extends Error {}

/** A completion request reduced to what the simulated engine needs. */
export interface GenerationRequest {
  /** The model the caller named, if any. */
  readonly model: string | undefined;
  /** The prompt as the model sees it (chat messages rendered through the simulator's template). */
  readonly prompt: string;
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly continuousUsage: boolean;
}

type Body = Record<string, unknown>;

const isInteger = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function objectBody(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('Input should be a valid dictionary or object to extract fields from');
  return body as Body;
}

function optionalInteger(body: Body, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!isInteger(value)) throw new BadRequest(`${field}: Input should be a valid integer`);
  return value;
}

function streamSettings(body: Body) {
  const stream = body.stream ?? false;
  if (typeof stream !== 'boolean') throw new BadRequest('stream: Input should be a valid boolean');
  const options = body.stream_options;
  if (options !== undefined && options !== null) {
    if (!stream) throw new BadRequest('Stream options can only be defined when `stream=True`.');
    if (typeof options !== 'object') throw new BadRequest('stream_options: Input should be a valid dictionary');
  }
  const { include_usage: includeUsage = false, continuous_usage_stats: continuousUsage = false } = (options ?? {}) as Body;
  return { stream, includeUsage: includeUsage === true, continuousUsage: includeUsage === true && continuousUsage === true };
}

function commonChecks(body: Body): string | undefined {
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') throw new BadRequest('model: Input should be a valid string');
  const n = optionalInteger(body, 'n') ?? 1;
  if (n < 1) throw new BadRequest(`n must be at least 1, got ${n}.`);
  // vLLM samples n answers per prompt; the simulator produces one.
  if (n > 1) throw new BadRequest('n > 1 is not simulated: the simulated model server returns one choice per request.');
  return (body.model ?? undefined) as string | undefined;
}

/**
 * The token budget: the request's own (at least 1), else what the context leaves; over the context length is
 * refused with vLLM's message.
 */
function tokenBudget(requested: number | undefined, promptTokens: number, maxModelLen: number, promptKind: string): number {
  if (requested !== undefined && requested < 1) throw new BadRequest(`max_tokens must be at least 1, got ${requested}.`);
  if (requested === undefined && promptTokens >= maxModelLen) {
    throw new BadRequest(`This model's maximum context length is ${maxModelLen} tokens. However, you requested ${promptTokens} tokens in the ${promptKind}, Please reduce the length of the ${promptKind}.`);
  }
  const maxTokens = requested ?? maxModelLen - promptTokens;
  if (promptTokens + maxTokens > maxModelLen) {
    throw new BadRequest(`This model's maximum context length is ${maxModelLen} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the ${promptKind}, ${maxTokens} in the completion). Please reduce the length of the ${promptKind} or completion.`);
  }
  return maxTokens;
}

/** A message's text: a string, or the text parts of a content list. */
function messageText(content: unknown, index: number): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part: unknown, p) => {
      const { type, text } = (part ?? {}) as Body;
      if (type !== 'text' || typeof text !== 'string') throw new BadRequest(`messages.${index}.content.${p}: the simulated model reads text parts only ({"type": "text", "text": ...})`);
      return text;
    }).join('\n');
  }
  throw new BadRequest(`messages.${index}.content: Input should be a valid string or a list of content parts`);
}

export function parseChatRequest(raw: unknown, maxModelLen: number): GenerationRequest {
  const body = objectBody(raw);
  const model = commonChecks(body);
  if (!Array.isArray(body.messages)) throw new BadRequest(body.messages === undefined ? 'messages: Field required' : 'messages: Input should be a valid list');
  // A plain chat template: each message on its role's turn, then the assistant's turn to answer.
  const turns = body.messages.map((m: unknown, i) => {
    const { role, content } = (m ?? {}) as Body;
    if (typeof role !== 'string') throw new BadRequest(`messages.${i}.role: Field required`);
    return `<|${role}|>\n${messageText(content, i)}\n`;
  });
  const prompt = `${turns.join('')}<|assistant|>\n`;
  const promptTokens = countTokens(prompt);
  const requested = optionalInteger(body, 'max_completion_tokens') ?? optionalInteger(body, 'max_tokens');
  return { model, prompt, promptTokens, maxTokens: tokenBudget(requested, promptTokens, maxModelLen, 'messages'), ...streamSettings(body) };
}

/** OpenAI's (and vLLM's) default for the legacy completions API. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

export function parseCompletionRequest(raw: unknown, maxModelLen: number): GenerationRequest {
  const body = objectBody(raw);
  const model = commonChecks(body);
  let { prompt } = body;
  if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0]))) prompt = prompt[0];
  let text: string;
  let promptTokens: number;
  if (typeof prompt === 'string') {
    text = prompt;
    promptTokens = countTokens(prompt);
  } else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every(isInteger)) {
    // Token ids: the simulator has no vocabulary, so the ids themselves are the text.
    text = prompt.join(' ');
    promptTokens = prompt.length;
  } else if (Array.isArray(prompt) && prompt.length > 1) {
    throw new BadRequest('A batch of prompts is not simulated: send one prompt per request.');
  } else {
    throw new BadRequest(prompt === undefined ? 'prompt: Field required' : 'prompt: Input should be a valid string or a list of token ids');
  }
  if (promptTokens === 0) throw new BadRequest('Prompt cannot be empty');
  const requested = 'max_tokens' in body ? optionalInteger(body, 'max_tokens') : COMPLETIONS_DEFAULT_MAX_TOKENS;
  return { model, prompt: text, promptTokens, maxTokens: tokenBudget(requested, promptTokens, maxModelLen, 'prompt'), ...streamSettings(body) };
}
