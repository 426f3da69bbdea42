// vLLM's OpenAI-compatible endpoints as the simulator answers them: /v1/models, /v1/completions and
// /v1/chat/completions, whole (JSON) or streamed (server-sent events), in the shapes vLLM v0.11 sends, errors
// included (`{"error": {message, type, param, code}}`, the envelope vLLM uses since v0.10.1).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from './engine.ts';
import { BadRequest, parseChatRequest, parseCompletionRequest, type GenerationRequest } from './openai-requests.ts';
import type { ServerLog } from './server-log.ts';
import { generate, type Generation } from './tokens.ts';

type FinishReason = Generation['finishReason'];

export interface ServedModel {
  /** Names the model answers to (vLLM's --served-model-name, else --model); the first is the one it reports. */
  readonly names: readonly string[];
  /** What was loaded (vLLM's --model). */
  readonly root: string;
  readonly maxModelLen: number;
  /** Seconds since the epoch the server started, as /v1/models reports. */
  readonly created: number;
}

export interface OpenAiApi {
  models(res: ServerResponse): void;
  chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void>;
  completions(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: status } });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest('Request body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('JSON decode error');
  }
}

/** vLLM's request ids: a kind prefix and a random hex id. */
const requestId = (prefix: string) => `${prefix}-${randomUUID().replaceAll('-', '')}`;

export function openAiApi(model: ServedModel, engine: Engine, log: ServerLog): OpenAiApi {
  const modelName = model.names[0]!;

  /** Checks and reads a request: answers the error itself and returns undefined when the request is refused. */
  const accept = async (req: IncomingMessage, res: ServerResponse, parse: (body: unknown, maxModelLen: number) => GenerationRequest) => {
    try {
      const request = parse(await readJson(req), model.maxModelLen);
      if (request.model !== undefined && !model.names.includes(request.model)) {
        sendError(res, 404, 'NotFoundError', `The model \`${request.model}\` does not exist.`);
        return undefined;
      }
      return request;
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      sendError(res, 400, 'BadRequestError', error.message);
      return undefined;
    }
  };

  /**
   * Runs the request on the engine, aborting it when the client goes away (as vLLM does), and hands each
   * token to `onToken` (with the finish reason on the last one); answers the finish reason, or undefined if
   * the request was aborted.
   */
  const run = async (id: string, request: GenerationRequest, res: ServerResponse, onToken: (token: string, index: number, finishReason: FinishReason | null) => void) => {
    const output = generate(request.prompt, request.maxTokens);
    const abort = new AbortController();
    const onClose = () => { if (!res.writableFinished) abort.abort(new Error('client disconnected')); };
    res.on('close', onClose);
    try {
      let index = 0;
      for await (const token of engine.generate({ promptTokens: request.promptTokens, output, signal: abort.signal })) {
        onToken(token, index, index === output.tokens.length - 1 ? output.finishReason : null);
        index++;
      }
      return output.finishReason;
    } catch (error) {
      if (!abort.signal.aborted) throw error;
      log.info('async_llm.py:384', `Aborted request ${id}.`);
      return undefined;
    } finally {
      res.off('close', onClose);
    }
  };

  const usage = (request: GenerationRequest, completionTokens: number) => ({
    prompt_tokens: request.promptTokens,
    total_tokens: request.promptTokens + completionTokens,
    completion_tokens: completionTokens,
  });

  const startStream = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    return (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  };

  return {
    models(res) {
      sendJson(res, 200, {
        object: 'list',
        data: model.names.map((id) => ({
          id, object: 'model', created: model.created, owned_by: 'vllm', root: model.root, parent: null, max_model_len: model.maxModelLen,
          permission: [{
            id: requestId('modelperm'), object: 'model_permission', created: model.created, allow_create_engine: false, allow_sampling: true,
            allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false,
          }],
        })),
      });
    },

    async chatCompletions(req, res) {
      const request = await accept(req, res, parseChatRequest);
      if (!request) return;
      const id = requestId('chatcmpl');
      const created = Math.floor(Date.now() / 1000);
      const chunk = (choices: unknown[], extra: object = {}) => ({ id, object: 'chat.completion.chunk', created, model: modelName, choices, ...extra });
      if (request.stream) {
        const send = startStream(res);
        const continuous = (completionTokens: number) => (request.continuousUsage ? { usage: usage(request, completionTokens) } : {});
        send(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], continuous(0)));
        let generated = 0;
        const finish = await run(id, request, res, (token, index, finishReason) => {
          generated = index + 1;
          const end = finishReason ? { finish_reason: finishReason, stop_reason: null } : { finish_reason: null };
          send(chunk([{ index: 0, delta: { content: token }, logprobs: null, ...end }], continuous(generated)));
        });
        if (finish === undefined) return;
        if (request.includeUsage) send(chunk([], { usage: usage(request, generated) }));
        res.end('data: [DONE]\n\n');
        return;
      }
      const tokens: string[] = [];
      const finish = await run(id, request, res, (token) => tokens.push(token));
      if (finish === undefined) return;
      sendJson(res, 200, {
        id, object: 'chat.completion', created, model: modelName,
        choices: [{
          index: 0,
          message: { role: 'assistant', content: tokens.join(''), refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning_content: null },
          logprobs: null, finish_reason: finish, stop_reason: null,
        }],
        service_tier: null, system_fingerprint: null,
        usage: { ...usage(request, tokens.length), prompt_tokens_details: null },
        prompt_logprobs: null, prompt_token_ids: null, kv_transfer_params: null,
      });
    },

    async completions(req, res) {
      const request = await accept(req, res, parseCompletionRequest);
      if (!request) return;
      const id = requestId('cmpl');
      const created = Math.floor(Date.now() / 1000);
      const body = (choices: unknown[], extra: object = {}) => ({ id, object: 'text_completion', created, model: modelName, choices, ...extra });
      if (request.stream) {
        const send = startStream(res);
        let generated = 0;
        const finish = await run(id, request, res, (token, index, finishReason) => {
          generated = index + 1;
          send(body([{ index: 0, text: token, logprobs: null, finish_reason: finishReason, stop_reason: null }],
            request.continuousUsage ? { usage: usage(request, generated) } : {}));
        });
        if (finish === undefined) return;
        if (request.includeUsage) send(body([], { usage: usage(request, generated) }));
        res.end('data: [DONE]\n\n');
        return;
      }
      const tokens: string[] = [];
      const finish = await run(id, request, res, (token) => tokens.push(token));
      if (finish === undefined) return;
      sendJson(res, 200, {
        ...body([{ index: 0, text: tokens.join(''), logprobs: null, finish_reason: finish, stop_reason: null, prompt_logprobs: null }]),
        service_tier: null, system_fingerprint: null,
        usage: { ...usage(request, tokens.length), prompt_tokens_details: null },
        kv_transfer_params: null,
      });
    },
  };
}
