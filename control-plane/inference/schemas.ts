// POST /v1/inference takes an OpenAI request (chat `messages` or completion `prompt`) plus the deployment
// to run it on, so clients reuse their payloads; fields Kiln does not name are passed on to vLLM as they are.
import { z } from 'zod';

const deployment = z.string().min(1).max(255).meta({
  description: 'The deployment to call: its id (dep_...) or its name, in the caller\'s organization.',
  example: 'llama-chat',
});

const ChatMessage = z.looseObject({
  role: z.string().min(1).max(64).meta({ example: 'user' }),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
}).meta({ id: 'InferenceChatMessage' });

const Prompt = z.union([
  z.string(),
  z.array(z.string()).min(1),
  z.array(z.number().int()).min(1),
  z.array(z.array(z.number().int()).min(1)).min(1),
]).meta({ description: 'A completion\'s prompt: text, texts, token ids, or lists of token ids.' });

export const InferenceRequest = z.looseObject({
  deployment,
  model: z.string().min(1).max(255).optional().meta({ description: 'Defaults to the deployment\'s model, the name vLLM serves it under.' }),
  messages: z.array(ChatMessage).min(1).optional().meta({ description: 'A chat completion (vLLM /v1/chat/completions). Give this or prompt.' }),
  prompt: Prompt.optional().meta({ description: 'A completion (vLLM /v1/completions). Give this or messages.' }),
  stream: z.boolean().optional().meta({ description: 'true: the answer is relayed as server-sent events, chunk by chunk.' }),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional()
    .meta({ description: 'include_usage: true keeps the final chunk carrying `usage` (Kiln always counts tokens; without it that chunk is left out).' }),
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  n: z.number().int().min(1).max(128).optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
}).superRefine((request, ctx) => {
  if ((request.messages === undefined) === (request.prompt === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['messages'], message: 'give either messages (a chat completion) or prompt (a completion)' });
  }
}).meta({
  id: 'InferenceRequest',
  description: 'An OpenAI chat completion or completion request, plus `deployment`. Other vLLM sampling parameters (seed, top_k, presence_penalty...) are passed on.',
});
export type InferenceInput = z.output<typeof InferenceRequest>;

const UsageView = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
}).meta({ id: 'InferenceUsage' });

/** What the model server answers, relayed as it is (OpenAI's shapes). */
export const InferenceStreams = {
  'application/json': z.looseObject({
    id: z.string(),
    object: z.string().meta({ description: '`chat.completion` or `text_completion`.' }),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(z.looseObject({ index: z.number().int(), finish_reason: z.string().nullable() })),
    usage: UsageView,
  }).meta({ id: 'InferenceResponse', description: 'Without stream: the model server\'s answer as it gave it.' }),
  'text/event-stream': z.string().meta({
    description: 'With stream: true, the model server\'s server-sent events as they come: `data: <chat.completion.chunk or text_completion JSON>` '
      + 'events, then `data: [DONE]`. X-Kiln-Replica names the pod that answers.',
  }),
};

export const InferenceTestRequest = z.strictObject({
  deployment,
  prompt: z.string().min(1).max(4000).default('Say hello.').meta({ description: 'Sent as a completion prompt. Default: "Say hello."' }),
  maxTokens: z.number().int().min(1).max(512).default(16).meta({ description: 'Tokens to generate, 1 to 512. Default 16.' }),
}).meta({ id: 'InferenceTestRequest' });
export type InferenceTestInput = z.output<typeof InferenceTestRequest>;

export const InferenceTestResult = z.object({
  deploymentId: z.string().meta({ example: 'dep_0123456789abcdefghij' }),
  model: z.string().nullable().meta({ description: 'The model the server reports in its answer.' }),
  replica: z.string().meta({ description: 'The pod that answered (or `gateway`).' }),
  latencyMs: z.number().int().meta({ description: 'From sending the probe to the end of its answer.' }),
  timeToFirstTokenMs: z.number().int().nullable().meta({ description: 'From sending the probe to the first generated text; null when none came.' }),
  tokens: z.object({ prompt: z.number().int().nullable(), completion: z.number().int().nullable() })
    .meta({ description: 'As the model server counted them; null when it did not say.' }),
  output: z.string().meta({ description: 'The text generated.' }),
}).meta({ id: 'InferenceTestResult' });
export type InferenceTestResultBody = z.infer<typeof InferenceTestResult>;
