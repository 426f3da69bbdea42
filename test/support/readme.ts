// The README's code blocks, for the tests that run them as written.
import { readFile } from 'node:fs/promises';

export interface ReadmeBlock {
  /** The heading the block stands under, as written (`### Inference`). */
  readonly heading: string;
  /** The fence's language: sh, bash, ts, yaml... */
  readonly language: string;
  readonly body: string;
}

const README = new URL('../../README.md', import.meta.url);

export async function readmeBlocks(): Promise<ReadmeBlock[]> {
  const blocks: ReadmeBlock[] = [];
  let heading = '';
  for (const match of (await readFile(README, 'utf8')).matchAll(/^(#{1,6} .*)$|^```(\w+)\n([\s\S]*?)^```$/gm)) {
    if (match[1]) heading = match[1];
    else blocks.push({ heading, language: match[2]!, body: match[3]! });
  }
  return blocks;
}

/** The one block of `language` under `heading`. */
export async function readmeBlock(heading: string, language = 'sh'): Promise<string> {
  const found = (await readmeBlocks()).filter((b) => b.heading === heading && b.language === language);
  if (found.length !== 1) throw new Error(`README.md has ${found.length} ${language} blocks under "${heading}", not one`);
  return found[0]!.body;
}
