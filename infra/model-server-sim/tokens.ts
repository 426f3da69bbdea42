// The simulated model's tokenizer and "model": no weights, just deterministic text. A token is a piece of at
// most six word characters or one other non-space character, with the whitespace before it; the pieces of a
// text joined give the text back, so streamed chunks, usage counts and the full answer always agree.
import { createHash } from 'node:crypto';

const TOKEN = /\s*(?:\w{1,6}|[^\s\w])/gu;

/** The tokens of `text`, each carrying its leading whitespace. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

/** Words the answer is made of when the prompt offers few of its own. */
const FILLER = ['the', 'model', 'answers', 'with', 'simulated', 'text', 'about', 'your', 'request', 'and', 'its', 'tokens', 'arrive', 'one', 'by', 'at', 'a', 'steady', 'pace'];

export interface Generation {
  /** The answer's tokens, in order. */
  readonly tokens: string[];
  /** `stop` when the answer ended on its own, `length` when max_tokens cut it. */
  readonly finishReason: 'stop' | 'length';
}

/**
 * The answer to a prompt: the same prompt always gets the same words (taken from the prompt and a filler
 * list), of a natural length between 16 and 63 tokens, cut to `maxTokens`.
 */
export function generate(prompt: string, maxTokens: number): Generation {
  const seed = createHash('sha256').update(prompt).digest();
  // Role markers of the chat template (`<|user|>`) are not the caller's words.
  const promptWords = [...new Set(prompt.replace(/<\|\w+\|>/g, ' ').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 64);
  const words = [...promptWords, ...FILLER];
  const natural = 16 + (seed[0]! % 48);
  const tokens: string[] = [];
  for (let i = 0; tokens.length < natural; i++) {
    const word = words[(seed[(i + 1) % seed.length]! + i * 7) % words.length]!;
    tokens.push(...tokenize(` ${word}`));
  }
  tokens.length = natural - 1;
  tokens[0] = tokens[0]!.trimStart();
  tokens.push('.');
  return tokens.length > maxTokens ? { tokens: tokens.slice(0, maxTokens), finishReason: 'length' } : { tokens, finishReason: 'stop' };
}
