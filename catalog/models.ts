// The model catalog: the Hugging Face models Kiln offers out of the box, with the figures from each model's
// config.json that size a deployment (weights, KV cache, context). Plain data, read by the control plane
// (model validation, GPU sizing, Hugging Face token checks) and the vLLM stack.

export const MODEL_TASKS = ['chat', 'completion', 'embedding'] as const;
export type ModelTask = (typeof MODEL_TASKS)[number];
export type ModelDtype = 'bfloat16' | 'float16' | 'float32';

export interface CatalogModel {
  /** Hugging Face id, e.g. 'meta-llama/Llama-3.1-8B-Instruct'. */
  readonly id: string;
  readonly displayName: string;
  /** e.g. 'Llama 3.1', 'Qwen2.5', 'Mixtral' */
  readonly family: string;
  /** Total parameters, billions (safetensors count; for MoE models the total, not the active). */
  readonly parametersBillion: number;
  /** config.json architectures[0], e.g. 'LlamaForCausalLM'. */
  readonly architecture: string;
  /** config.json max_position_embeddings (what vLLM takes as the default max_model_len), tokens. */
  readonly contextLength: number;
  /** num_hidden_layers */
  readonly layers: number;
  /** num_key_value_heads (GQA); equals attention heads for MHA models. */
  readonly kvHeads: number;
  /** head_dim, or hidden_size / num_attention_heads when config.json has no head_dim. */
  readonly headSize: number;
  /** config.json torch_dtype */
  readonly dtype: ModelDtype;
  /** Hugging Face license tag, e.g. 'llama3.1', 'apache-2.0', 'mit', 'gemma', 'qwen'. */
  readonly license: string;
  /** Whether the Hub asks users to accept terms before downloading (then a Hugging Face token is needed). */
  readonly gated: boolean;
  readonly task: ModelTask;
}

export const MODELS: readonly CatalogModel[] = [
  // Llama (Meta): gated behind the Llama community license.
  { id: 'meta-llama/Llama-3.2-1B-Instruct', displayName: 'Llama 3.2 1B Instruct', family: 'Llama 3.2', parametersBillion: 1.24,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 16, kvHeads: 8, headSize: 64, dtype: 'bfloat16', license: 'llama3.2', gated: true, task: 'chat' },
  { id: 'meta-llama/Llama-3.2-3B-Instruct', displayName: 'Llama 3.2 3B Instruct', family: 'Llama 3.2', parametersBillion: 3.21,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 28, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'llama3.2', gated: true, task: 'chat' },
  { id: 'meta-llama/Llama-3.1-8B-Instruct', displayName: 'Llama 3.1 8B Instruct', family: 'Llama 3.1', parametersBillion: 8.03,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'llama3.1', gated: true, task: 'chat' },
  { id: 'meta-llama/Llama-3.1-8B', displayName: 'Llama 3.1 8B', family: 'Llama 3.1', parametersBillion: 8.03,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'llama3.1', gated: true, task: 'completion' },
  { id: 'meta-llama/Llama-3.1-70B-Instruct', displayName: 'Llama 3.1 70B Instruct', family: 'Llama 3.1', parametersBillion: 70.6,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 80, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'llama3.1', gated: true, task: 'chat' },
  { id: 'meta-llama/Llama-3.3-70B-Instruct', displayName: 'Llama 3.3 70B Instruct', family: 'Llama 3.3', parametersBillion: 70.6,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 80, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'llama3.3', gated: true, task: 'chat' },

  // Qwen2.5 (Alibaba): open downloads; the 3B and 72B under Qwen's own licenses.
  { id: 'Qwen/Qwen2.5-0.5B-Instruct', displayName: 'Qwen2.5 0.5B Instruct', family: 'Qwen2.5', parametersBillion: 0.494,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 24, kvHeads: 2, headSize: 64, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-1.5B-Instruct', displayName: 'Qwen2.5 1.5B Instruct', family: 'Qwen2.5', parametersBillion: 1.54,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 28, kvHeads: 2, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-3B-Instruct', displayName: 'Qwen2.5 3B Instruct', family: 'Qwen2.5', parametersBillion: 3.09,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 36, kvHeads: 2, headSize: 128, dtype: 'bfloat16', license: 'qwen-research', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-7B-Instruct', displayName: 'Qwen2.5 7B Instruct', family: 'Qwen2.5', parametersBillion: 7.62,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 28, kvHeads: 4, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-7B', displayName: 'Qwen2.5 7B', family: 'Qwen2.5', parametersBillion: 7.62,
    architecture: 'Qwen2ForCausalLM', contextLength: 131072, layers: 28, kvHeads: 4, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'completion' },
  { id: 'Qwen/Qwen2.5-14B-Instruct', displayName: 'Qwen2.5 14B Instruct', family: 'Qwen2.5', parametersBillion: 14.8,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 48, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-32B-Instruct', displayName: 'Qwen2.5 32B Instruct', family: 'Qwen2.5', parametersBillion: 32.8,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 64, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-72B-Instruct', displayName: 'Qwen2.5 72B Instruct', family: 'Qwen2.5', parametersBillion: 72.7,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 80, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'qwen', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen2.5-Coder-7B-Instruct', displayName: 'Qwen2.5 Coder 7B Instruct', family: 'Qwen2.5', parametersBillion: 7.62,
    architecture: 'Qwen2ForCausalLM', contextLength: 32768, layers: 28, kvHeads: 4, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },

  // Qwen3 (Alibaba): explicit head_dim 128 at every size; the 30B-A3B is a mixture of 128 experts, 8 active.
  { id: 'Qwen/Qwen3-0.6B', displayName: 'Qwen3 0.6B', family: 'Qwen3', parametersBillion: 0.752,
    architecture: 'Qwen3ForCausalLM', contextLength: 40960, layers: 28, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen3-4B', displayName: 'Qwen3 4B', family: 'Qwen3', parametersBillion: 4.02,
    architecture: 'Qwen3ForCausalLM', contextLength: 40960, layers: 36, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen3-8B', displayName: 'Qwen3 8B', family: 'Qwen3', parametersBillion: 8.19,
    architecture: 'Qwen3ForCausalLM', contextLength: 40960, layers: 36, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen3-14B', displayName: 'Qwen3 14B', family: 'Qwen3', parametersBillion: 14.8,
    architecture: 'Qwen3ForCausalLM', contextLength: 40960, layers: 40, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen3-32B', displayName: 'Qwen3 32B', family: 'Qwen3', parametersBillion: 32.8,
    architecture: 'Qwen3ForCausalLM', contextLength: 40960, layers: 64, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },
  { id: 'Qwen/Qwen3-30B-A3B', displayName: 'Qwen3 30B-A3B (MoE)', family: 'Qwen3', parametersBillion: 30.5,
    architecture: 'Qwen3MoeForCausalLM', contextLength: 40960, layers: 48, kvHeads: 4, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat' },

  // Mistral AI: Apache-2.0, but the Hub asks for contact details before downloading.
  { id: 'mistralai/Mistral-7B-Instruct-v0.3', displayName: 'Mistral 7B Instruct v0.3', family: 'Mistral', parametersBillion: 7.25,
    architecture: 'MistralForCausalLM', contextLength: 32768, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: true, task: 'chat' },
  { id: 'mistralai/Mistral-7B-v0.3', displayName: 'Mistral 7B v0.3', family: 'Mistral', parametersBillion: 7.25,
    architecture: 'MistralForCausalLM', contextLength: 32768, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: true, task: 'completion' },
  { id: 'mistralai/Mistral-Small-24B-Instruct-2501', displayName: 'Mistral Small 24B Instruct (2501)', family: 'Mistral Small', parametersBillion: 23.6,
    architecture: 'MistralForCausalLM', contextLength: 32768, layers: 40, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: true, task: 'chat' },
  { id: 'mistralai/Mixtral-8x7B-Instruct-v0.1', displayName: 'Mixtral 8x7B Instruct v0.1', family: 'Mixtral', parametersBillion: 46.7,
    architecture: 'MixtralForCausalLM', contextLength: 32768, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'apache-2.0', gated: true, task: 'chat' },

  // Gemma 2 (Google): gated behind the Gemma terms. The 2B and 9B configs say float32; vLLM serves them in bfloat16.
  { id: 'google/gemma-2-2b-it', displayName: 'Gemma 2 2B IT', family: 'Gemma 2', parametersBillion: 2.61,
    architecture: 'Gemma2ForCausalLM', contextLength: 8192, layers: 26, kvHeads: 4, headSize: 256, dtype: 'float32', license: 'gemma', gated: true, task: 'chat' },
  { id: 'google/gemma-2-9b-it', displayName: 'Gemma 2 9B IT', family: 'Gemma 2', parametersBillion: 9.24,
    architecture: 'Gemma2ForCausalLM', contextLength: 8192, layers: 42, kvHeads: 8, headSize: 256, dtype: 'float32', license: 'gemma', gated: true, task: 'chat' },
  { id: 'google/gemma-2-27b-it', displayName: 'Gemma 2 27B IT', family: 'Gemma 2', parametersBillion: 27.2,
    architecture: 'Gemma2ForCausalLM', contextLength: 8192, layers: 46, kvHeads: 16, headSize: 128, dtype: 'bfloat16', license: 'gemma', gated: true, task: 'chat' },

  // Phi (Microsoft): MIT. Phi-3.5-mini and phi-2 use full multi-head attention.
  { id: 'microsoft/Phi-3.5-mini-instruct', displayName: 'Phi-3.5 mini Instruct', family: 'Phi-3.5', parametersBillion: 3.82,
    architecture: 'Phi3ForCausalLM', contextLength: 131072, layers: 32, kvHeads: 32, headSize: 96, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat' },
  { id: 'microsoft/phi-4', displayName: 'Phi-4', family: 'Phi-4', parametersBillion: 14.7,
    architecture: 'Phi3ForCausalLM', contextLength: 16384, layers: 40, kvHeads: 10, headSize: 128, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat' },
  { id: 'microsoft/phi-2', displayName: 'Phi-2', family: 'Phi-2', parametersBillion: 2.78,
    architecture: 'PhiForCausalLM', contextLength: 2048, layers: 32, kvHeads: 32, headSize: 80, dtype: 'float16', license: 'mit', gated: false, task: 'completion' },

  // DeepSeek-R1 distillations: reasoning models on Qwen2.5 and Llama 3.1 bases, MIT.
  { id: 'deepseek-ai/DeepSeek-R1-Distill-Qwen-7B', displayName: 'DeepSeek-R1 Distill Qwen 7B', family: 'DeepSeek-R1 Distill', parametersBillion: 7.62,
    architecture: 'Qwen2ForCausalLM', contextLength: 131072, layers: 28, kvHeads: 4, headSize: 128, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat' },
  { id: 'deepseek-ai/DeepSeek-R1-Distill-Llama-8B', displayName: 'DeepSeek-R1 Distill Llama 8B', family: 'DeepSeek-R1 Distill', parametersBillion: 8.03,
    architecture: 'LlamaForCausalLM', contextLength: 131072, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat' },
  { id: 'deepseek-ai/DeepSeek-R1-Distill-Qwen-32B', displayName: 'DeepSeek-R1 Distill Qwen 32B', family: 'DeepSeek-R1 Distill', parametersBillion: 32.8,
    architecture: 'Qwen2ForCausalLM', contextLength: 131072, layers: 64, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat' },

  // Embedding models (vLLM's pooling runner: /v1/embeddings).
  { id: 'BAAI/bge-large-en-v1.5', displayName: 'BGE Large EN v1.5', family: 'BGE', parametersBillion: 0.335,
    architecture: 'BertModel', contextLength: 512, layers: 24, kvHeads: 16, headSize: 64, dtype: 'float32', license: 'mit', gated: false, task: 'embedding' },
  { id: 'intfloat/e5-mistral-7b-instruct', displayName: 'E5 Mistral 7B Instruct', family: 'E5', parametersBillion: 7.11,
    architecture: 'MistralModel', contextLength: 32768, layers: 32, kvHeads: 8, headSize: 128, dtype: 'float16', license: 'mit', gated: false, task: 'embedding' },
  { id: 'Alibaba-NLP/gte-Qwen2-1.5B-instruct', displayName: 'GTE Qwen2 1.5B Instruct', family: 'GTE', parametersBillion: 1.78,
    architecture: 'Qwen2ForCausalLM', contextLength: 131072, layers: 28, kvHeads: 2, headSize: 128, dtype: 'float32', license: 'apache-2.0', gated: false, task: 'embedding' },
];

/** Architectures vLLM can serve (config.json architectures[0]): every one in MODELS and other common ones. */
export const VLLM_ARCHITECTURES: readonly string[] = [
  // Decoder-only text generation.
  'LlamaForCausalLM', 'MistralForCausalLM', 'MixtralForCausalLM',
  'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'Qwen3ForCausalLM', 'Qwen3MoeForCausalLM',
  'GemmaForCausalLM', 'Gemma2ForCausalLM', 'Gemma3ForCausalLM', 'Gemma3ForConditionalGeneration',
  'Phi3ForCausalLM', 'PhiForCausalLM', 'PhiMoEForCausalLM',
  'DeepseekForCausalLM', 'DeepseekV2ForCausalLM', 'DeepseekV3ForCausalLM',
  'GPTNeoXForCausalLM', 'GPT2LMHeadModel', 'GPTJForCausalLM', 'GPTBigCodeForCausalLM', 'Starcoder2ForCausalLM',
  'FalconForCausalLM', 'BloomForCausalLM', 'OPTForCausalLM',
  'StableLmForCausalLM', 'OlmoForCausalLM', 'Olmo2ForCausalLM', 'OlmoeForCausalLM',
  'CohereForCausalLM', 'Cohere2ForCausalLM', 'GraniteForCausalLM', 'GraniteMoeForCausalLM',
  'InternLM2ForCausalLM', 'BaichuanForCausalLM', 'ChatGLMModel', 'GlmForCausalLM', 'Glm4ForCausalLM',
  'ExaoneForCausalLM', 'MiniCPMForCausalLM', 'JambaForCausalLM', 'MambaForCausalLM',
  // Vision-language.
  'LlavaForConditionalGeneration', 'Qwen2VLForConditionalGeneration', 'Qwen2_5_VLForConditionalGeneration',
  'Mistral3ForConditionalGeneration', 'Llama4ForConditionalGeneration',
  // Embedding and pooling.
  'BertModel', 'RobertaModel', 'XLMRobertaModel', 'NomicBertModel', 'Qwen2Model', 'MistralModel', 'LlamaModel',
];

/** The catalog model with this Hugging Face id (compared case-insensitively, as the Hub resolves ids). */
export function findCatalogModel(id: string): CatalogModel | undefined {
  const wanted = id.toLowerCase();
  return MODELS.find((m) => m.id.toLowerCase() === wanted);
}
