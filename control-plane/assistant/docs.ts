// Kiln's documentation as a searchable corpus: README.md and ARCHITECTURE.md cut into their sections (the
// architecture's folder table a row per folder), and every API route's summary (the source of the OpenAPI
// document), ranked with MiniSearch (BM25). Both /v1/onboarding/help and the assistant retrieve from it.
// The files are read from the repository the API runs from, once, when the first search needs them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import type { Route } from '../http/routes.ts';

export interface DocSection {
  /** `README.md#inference`, `ARCHITECTURE.md#folders-control-plane`, `openapi#listDeployments`. */
  id: string;
  /** Where the section is: a documentation file, or `openapi` for a route. */
  source: string;
  /** The heading's GitHub anchor, or the route's operationId. */
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
export const DOC_FILES = ['README.md', 'ARCHITECTURE.md'] as const;

// Words every question has: left out of the index and of queries, so "why did my deployment fail" ranks by
// "deployment" and "fail", not by "why" and "my".
const STOP_WORDS = new Set(('a an and are as at be by can could did do does for from has have how i if in into is it its '
  + 'me my of on or our should so that the their them then there these this to was we what when where which who why will '
  + 'with would you your kiln please tell show').split(' '));

const SNIPPET_CHARS = 280;

/** README sections a newcomer needs first, in the order of getting started; the README's others follow in its order. */
const TOPICS = [
  'from-sign-up-to-a-deployment', 'inference', 'sizing-a-deployment-and-the-dry-run', 'what-a-deployment-costs', 'credits-and-metering',
  'templates', 'inviting-someone', 'alerts-budgets-and-cost-recommendations', 'autoscaling-and-scale-to-zero', 'notifications',
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
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
  // The architecture's folder table: a row per folder, each a page of its own. README tables (settings,
  // onboarding steps) stay in their section: a row alone is a line, which BM25 would rank above the guide.
  return source === 'ARCHITECTURE.md' ? sections.flatMap((s) => (s.text.includes('\n| `') ? splitTable(s) : [s])) : sections;
}

/** A section holding a table of folders (ARCHITECTURE.md's): one section per row, titled by its first cell. */
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

/** Ids made unique (a table may name a thing twice): a repeat gets `-1`, `-2`, as GitHub's anchors do. */
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
  /** The README's sections in order: where a newcomer starts. */
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
      const readme = sections.filter((s) => s.source === 'README.md' && s.title !== 'Kiln');
      const first = TOPICS.flatMap((anchor) => readme.filter((s) => s.anchor === anchor));
      return [...first, ...readme.filter((s) => !first.includes(s))].slice(0, limit).map((s) => hit(s, [], 0));
    },
  };
}

/** The index of the repository's own documentation and the app's routes, built on first use. */
export function repositoryDocs(routes: () => readonly Route[]): () => DocsIndex {
  let built: DocsIndex | undefined;
  return () => (built ??= buildDocsIndex(
    DOC_FILES.map((source) => ({ source, markdown: readFileSync(join(ROOT, source), 'utf8') })),
    routes(),
  ));
}
