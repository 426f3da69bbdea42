// The code blocks of README.md and of the docs site's pages, for the tests that run them as written.
import { readFile } from 'node:fs/promises';
import { sidebar, type SidebarItem } from '../../docs/.vitepress/sidebar.ts';

export interface DocBlock {
  /** The file the block is in, from the repository's root: `README.md`, `docs/guides/cli.md`. */
  readonly file: string;
  /** The heading the block stands under, as written (`## Inference`). */
  readonly heading: string;
  /** The fence's language: sh, bash, ts, yaml... */
  readonly language: string;
  readonly body: string;
}

const ROOT = new URL('../../', import.meta.url);

/** The docs site's pages in the sidebar's order, as files from the repository's root. */
export function docsPages(): string[] {
  const links = (items: SidebarItem[]): string[] => items.flatMap((item) => [...(item.link ? [item.link] : []), ...links(item.items ?? [])]);
  // `/api` is the API reference, drawn from the OpenAPI document: no Markdown of its own to run.
  return links(sidebar).filter((link) => link !== '/api').map((link) => `docs${link.endsWith('/') ? `${link}index` : link}.md`);
}

/** A Markdown file's fenced blocks, each under the heading before it. */
export async function blocksOf(file: string): Promise<DocBlock[]> {
  const blocks: DocBlock[] = [];
  let heading = '';
  for (const match of (await readFile(new URL(file, ROOT), 'utf8')).matchAll(/^(#{1,6} .*)$|^```(\w+)\n([\s\S]*?)^```$/gm)) {
    if (match[1]) heading = match[1];
    else blocks.push({ file, heading, language: match[2]!, body: match[3]! });
  }
  return blocks;
}

/** The one block of `language` under `heading` in `file`. */
export async function docBlock(file: string, heading: string, language = 'sh'): Promise<string> {
  const found = (await blocksOf(file)).filter((b) => b.heading === heading && b.language === language);
  if (found.length !== 1) throw new Error(`${file} has ${found.length} ${language} blocks under "${heading}", not one`);
  return found[0]!.body;
}
