// Kiln's documentation as a searchable corpus: the docs site's pages (docs/**/*.md) cut into their sections (the
// architecture's and the areas' tables a row per folder), and every API route's summary (the source of the OpenAPI
// document), ranked with MiniSearch (BM25). Both /v1/onboarding/help and the assistant retrieve from it, and cite
// each section by its URL on the docs site Kiln serves (/docs/...#anchor). The pages are read from the repository
// the API runs from, once, when the first search needs them.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import MiniSearch from 'minisearch';
import type { Route } from '../http/routes.ts';

export interface DocSection {
  /** `/docs/concepts/inference#inference-and-the-gateway`, `openapi#listDeployments`. */
  id: string;
  /** Where the section is: a docs page's URL (`/docs/concepts/inference`), or `openapi` for a route. */
  source: string;
  /** The heading's anchor on its page, or the route's operationId. */
  anchor: string;
  title: string;
  text: string;
}

export interface DocHit {
  id: string;
  source: string;
  anchor: string;
  title: string;
  snippet: string;
  score: number;
}

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS_DIR = join(ROOT, 'docs');

// Words every question has: left out of the index and of queries, so "why did my deployment fail" ranks by
// "deployment" and "fail", not by "why" and "my".
const STOP_WORDS = new Set(('a an and are as at be by can could did do does for from has have how i if in into is it its '
  + 'me my of on or our should so that the their them then there these this to was we what when where which who why will '
  + 'with would you your kiln please tell show').split(' '));

const SNIPPET_CHARS = 280;

/** Pages a newcomer needs first, in the order of getting started; the other pages follow in URL order. */
const TOPICS = [
  '/docs/quick-start', '/docs/guides/first-deployment', '/docs/concepts/inference', '/docs/guides/sizing', '/docs/concepts/cost-and-billing',
  '/docs/concepts/models-and-templates', '/docs/concepts/organizations', '/docs/guides/alerts-and-notifications', '/docs/concepts/autoscaling',
  '/docs/concepts/lifecycle',
];

/** Pages whose tables are a row per folder, each row a section of its own. */
const FOLDER_TABLES = new Set(['/docs/architecture/', '/docs/reference/areas']);

/** The docs site's anchor for a heading (VitePress's slug): accents and punctuation to hyphens, lower case. */
export function anchorOf(heading: string): string {
  return heading.normalize('NFKD').replace(/[\u0300-\u036F]/g, '')
    .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-').replace(/-{2,}/g, '-').replace(/^-+|-+$/g, '')
    .replace(/^(\d)/, '_$1').toLowerCase();
}

/** A markdown file's sections, cut at its headings (not at `#` lines inside code fences: shell comments). */
export function markdownSections(source: string, markdown: string): DocSection[] {
  const sections: DocSection[] = [];
  let title = source;
  let lines: string[] = [];
  let fenced = false;
  const seen = new Map<string, number>();
  const close = () => {
    const text = lines.join('\n').trim();
    if (text) {
      const base = anchorOf(title);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      const anchor = n ? `${base}-${n}` : base;
      sections.push({ id: `${source}#${anchor}`, source, anchor, title, text });
    }
    lines = [];
  };
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^(#{1,4})\s+(.+)$/.exec(line);
    if (heading) {
      close();
      title = heading[2]!.trim();
    } else lines.push(line);
  }
  close();
  // Folder tables: a row per folder, each a section of its own. Other tables (settings, onboarding steps) stay
  // in their section: a row alone is a line, which BM25 would rank above the guide.
  return FOLDER_TABLES.has(source) ? sections.flatMap((s) => (s.text.includes('\n| `') ? splitTable(s) : [s])) : sections;
}

/** A section holding a table of folders: one section per row, titled by its first cell. */
function splitTable(section: DocSection): DocSection[] {
  const rows = section.text.split('\n').filter((line) => /^\|\s*`/.test(line));
  const rest = section.text.split('\n').filter((line) => !line.startsWith('|')).join('\n').trim();
  const parts: DocSection[] = rest ? [{ ...section, text: rest }] : [];
  for (const row of rows) {
    const [name = '', ...cells] = row.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
    const folder = name.replace(/`/g, '');
    const anchor = `${section.anchor}-${anchorOf(folder)}`;
    parts.push({ id: `${section.source}#${anchor}`, source: section.source, anchor, title: `${section.title}: ${folder}`, text: cells.join('\n') });
  }
  return parts;
}

/** Each route as a section: what it does, its method and path, its tag. */
function routeSections(routes: readonly Route[]): DocSection[] {
  return routes.filter((r) => r.permission !== 'internal').map((r) => ({
    id: `openapi#${r.operationId}`, source: 'openapi', anchor: r.operationId, title: `${r.method} ${r.path}`,
    text: `${r.summary}. ${r.tag}. ${r.method} ${r.path}`,
  }));
}

/** The query's words, lower case, stop words out (what the index keeps of a text, too). */
export function termsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]*/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
}

/** Up to SNIPPET_CHARS of `text` around the first place a term occurs (its start when none does), on whole words. */
export function snippetOf(text: string, terms: readonly string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  const at = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0), Infinity);
  let start = at === Infinity ? 0 : Math.max(0, at - 80);
  if (start > 0) start = flat.indexOf(' ', start) + 1;
  const end = Math.min(flat.length, start + SNIPPET_CHARS);
  const cut = end < flat.length ? flat.lastIndexOf(' ', end) : end;
  return `${start > 0 ? '…' : ''}${flat.slice(start, cut > start ? cut : end)}${end < flat.length ? '…' : ''}`;
}

/** Ids made unique (a table may name a thing twice): a repeat gets `-1`, `-2`, as the site's anchors do. */
function unique(sections: DocSection[]): DocSection[] {
  const seen = new Map<string, number>();
  return sections.map((s) => {
    const n = seen.get(s.id) ?? 0;
    seen.set(s.id, n + 1);
    return n ? { ...s, id: `${s.id}-${n}`, anchor: `${s.anchor}-${n}` } : s;
  });
}

export interface DocsIndex {
  search(query: string, limit: number): DocHit[];
  /** The pages' first sections, where a newcomer starts first. */
  topics(limit: number): DocHit[];
  readonly size: number;
}

export function buildDocsIndex(files: ReadonlyArray<{ source: string; markdown: string }>, routes: readonly Route[]): DocsIndex {
  const sections = unique([...files.flatMap((f) => markdownSections(f.source, f.markdown)), ...routeSections(routes)]);
  const byId = new Map(sections.map((s) => [s.id, s]));
  const index = new MiniSearch<DocSection>({
    fields: ['title', 'text'],
    processTerm: (term) => (STOP_WORDS.has(term.toLowerCase()) ? null : term.toLowerCase()),
    // A route's summary is one short line, which BM25's length normalization would rank above the guide
    // that explains the same thing: routes count for half.
    searchOptions: {
      boost: { title: 3 }, prefix: true, fuzzy: 0.15, combineWith: 'OR',
      boostDocument: (id: string) => (id.startsWith('openapi#') ? 0.5 : 1),
    },
  });
  index.addAll(sections);
  const hit = (s: DocSection, terms: readonly string[], score: number): DocHit => ({
    id: s.id, source: s.source, anchor: s.anchor, title: s.title, snippet: snippetOf(s.text, terms), score: Math.round(score * 1000) / 1000,
  });
  return {
    size: sections.length,
    search(query, limit) {
      const terms = termsOf(query);
      if (!terms.length) return [];
      return index.search(terms.join(' ')).slice(0, limit).map((r) => hit(byId.get(r.id as string)!, r.terms, r.score));
    },
    topics(limit) {
      const pages = sections.filter((s, i) => s.source !== 'openapi' && sections[i - 1]?.source !== s.source);
      const first = TOPICS.flatMap((url) => pages.filter((s) => s.source === url));
      return [...first, ...pages.filter((s) => !first.includes(s))].slice(0, limit).map((s) => hit(s, [], 0));
    },
  };
}

/** Every Markdown page under docs/ (but the site's own folder), by file from docs/. */
function docsFiles(dir = DOCS_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? docsFiles(path) : entry.name.endsWith('.md') ? [relative(DOCS_DIR, path).split(sep).join('/')] : [];
  }).sort();
}

/** A page's URL on the docs site: `guides/cli.md` is `/docs/guides/cli`, `architecture/index.md` `/docs/architecture/`. */
export function pageUrl(file: string): string {
  return `/docs/${file.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '')}`;
}

/**
 * A page's Markdown as the site renders it: its front matter left out, and each `<!--@include: path#region-->`
 * replaced by what it includes (the whole file, or the part between `#region name` and `#endregion name`).
 */
export function renderedMarkdown(file: string): string {
  const markdown = readFileSync(join(DOCS_DIR, file), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  return markdown.replace(/<!--@include: ([^#>]+?)(?:#([\w-]+))?-->/g, (_, path: string, region?: string) => {
    const included = readFileSync(join(DOCS_DIR, dirname(file), path.trim()), 'utf8');
    if (!region) return included;
    const inside = new RegExp(`<!-- #region ${region} -->\\n([\\s\\S]*?)<!-- #endregion ${region} -->`).exec(included);
    if (!inside) throw new Error(`docs/${file} includes ${path}#${region}, which has no such region`);
    return inside[1]!;
  });
}

/** The index of the docs site's pages and the app's routes, built on first use. */
export function repositoryDocs(routes: () => readonly Route[]): () => DocsIndex {
  let built: DocsIndex | undefined;
  return () => (built ??= buildDocsIndex(docsFiles().map((file) => ({ source: pageUrl(file), markdown: renderedMarkdown(file) })), routes()));
}
