// The facts of a Hugging Face model outside Kiln's catalog, from the Hub itself through its own client
// (@huggingface/hub): the model API (safetensors parameter total, license, gating, pipeline tag) and the
// repository's config.json (architecture, context length, layers, KV heads, head size, dtype). A Hub that
// cannot be reached, is too slow or fails (5xx) is a 503 for this lookup alone; a model it does not have
// is a 404.
import { downloadFile, HubApiError, modelInfo } from '@huggingface/hub';
import type { CatalogModel, ModelDtype, ModelTask } from '../../catalog/models.ts';
import { NotFoundError, ServiceUnavailableError } from '../core/errors.ts';
import type { KnownFacts } from './organization-model.entity.ts';

export interface HubOptions {
  /** The Hub's base URL (KILN_HF_ENDPOINT), e.g. https://huggingface.co. */
  readonly endpoint: string;
  /** Lets config.json of gated models be read (KILN_HF_TOKEN). */
  readonly token: string | undefined;
  /** The whole lookup (both requests) gives up after this long. */
  readonly timeoutMs: number;
}

export interface HubClient {
  /** What the Hub says of `repo` (at `revision`); throws 404 NotFoundError or 503 ServiceUnavailableError. */
  facts(repo: string, revision?: string): Promise<KnownFacts>;
}

const DTYPES: readonly ModelDtype[] = ['bfloat16', 'float16', 'float32'];

/** Every fact the catalog has (bar the id) is known: the model can be sized. */
export function isComplete(facts: KnownFacts | null | undefined): facts is Omit<CatalogModel, 'id'> {
  return !!facts && FACT_KEYS.every((key) => facts[key] !== undefined);
}

export const FACT_KEYS = [
  'displayName', 'family', 'parametersBillion', 'architecture', 'contextLength', 'layers', 'kvHeads', 'headSize', 'dtype', 'license', 'gated', 'task',
] as const satisfies ReadonlyArray<keyof KnownFacts>;

export function createHubClient(options: HubOptions): HubClient {
  return {
    async facts(repo, revision) {
      const signal = AbortSignal.timeout(options.timeoutMs);
      // One deadline for every request of the lookup; the token goes to the Hub alone (the client adds it).
      const timed: typeof fetch = (input, init) => fetch(input, { ...init, signal });
      const common = { hubUrl: options.endpoint, fetch: timed, ...(options.token ? { accessToken: options.token } : {}) };
      const where = `${repo}${revision ? `@${revision}` : ''}`;

      let info;
      try {
        info = await modelInfo({ ...common, name: repo, revision, additionalFields: ['safetensors', 'cardData', 'tags'] });
      } catch (error) {
        // Without a token the Hub answers 401 for a repository it does not have (or one that is private).
        if (error instanceof HubApiError && [401, 403, 404].includes(error.statusCode)) {
          throw new NotFoundError(`Model ${where} was not found on the Hugging Face Hub (or is private)`, { model: where });
        }
        throw unavailable(where, error);
      }

      let config: Record<string, unknown> | undefined;
      try {
        const blob = await downloadFile({ ...common, repo: { type: 'model', name: repo }, path: 'config.json', revision: revision ?? 'main', xet: false });
        config = blob ? parseObject(await blob.text()) : undefined;
      } catch (error) {
        // A gated model's files need an accepted token: its configuration stays unknown without one.
        if (!(error instanceof HubApiError && [401, 403, 404].includes(error.statusCode))) throw unavailable(where, error);
      }
      return describe(repo, info, config);
    },
  };
}

function unavailable(where: string, error: unknown): ServiceUnavailableError {
  const reason = error instanceof HubApiError ? `it answered ${error.statusCode}`
    : (error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError' ? 'it did not answer in time' : 'it could not be reached';
  return new ServiceUnavailableError(`The Hugging Face Hub could not describe ${where}: ${reason}. Try again later`, { model: where });
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

const positiveInteger = (value: unknown) => (Number.isInteger(value) && (value as number) > 0 ? value as number : undefined);

interface HubInfo {
  readonly gated: false | 'auto' | 'manual';
  readonly task?: string;
  readonly safetensors?: { total?: number };
  readonly cardData?: { license?: unknown };
  readonly tags?: string[];
}

/** The Hub's answers in the catalog's terms; what neither tells stays out. */
function describe(repo: string, info: HubInfo, config: Record<string, unknown> | undefined): KnownFacts {
  // Vision-language models keep the language model's shape under text_config.
  const text = { ...config, ...(config?.text_config && typeof config.text_config === 'object' ? config.text_config as Record<string, unknown> : {}) };
  const attentionHeads = positiveInteger(text.num_attention_heads);
  const hiddenSize = positiveInteger(text.hidden_size);
  const dtype = text.torch_dtype ?? text.dtype ?? config?.torch_dtype;
  const license = typeof info.cardData?.license === 'string' ? info.cardData.license : info.tags?.find((tag) => tag.startsWith('license:'))?.slice('license:'.length);
  const total = info.safetensors?.total;
  const facts: Record<string, unknown> = {
    displayName: repo.split('/')[1],
    family: typeof config?.model_type === 'string' ? config.model_type : undefined,
    // Three significant figures, as the catalog writes them.
    parametersBillion: typeof total === 'number' && total > 0 ? Number((total / 1e9).toPrecision(3)) : undefined,
    architecture: Array.isArray(config?.architectures) && typeof config.architectures[0] === 'string' ? config.architectures[0] : undefined,
    contextLength: positiveInteger(text.max_position_embeddings),
    layers: positiveInteger(text.num_hidden_layers),
    kvHeads: positiveInteger(text.num_key_value_heads) ?? attentionHeads,
    headSize: positiveInteger(text.head_dim) ?? (attentionHeads && hiddenSize ? positiveInteger(hiddenSize / attentionHeads) : undefined),
    dtype: DTYPES.includes(dtype as ModelDtype) ? dtype : undefined,
    license,
    gated: info.gated !== false,
    task: task(info.task, info.tags ?? []),
  };
  return Object.fromEntries(Object.entries(facts).filter(([, value]) => value !== undefined)) as KnownFacts;
}

/** The pipeline tag in Kiln's tasks: text generation is chat when the Hub marks the model conversational. */
function task(pipelineTag: string | undefined, tags: readonly string[]): ModelTask | undefined {
  if (pipelineTag === 'feature-extraction' || pipelineTag === 'sentence-similarity') return 'embedding';
  if (pipelineTag === 'text-generation' || pipelineTag === 'image-text-to-text') return tags.includes('conversational') ? 'chat' : 'completion';
  return undefined;
}
