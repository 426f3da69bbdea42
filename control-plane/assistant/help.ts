// /v1/onboarding/help: Kiln's documentation searched (sections ranked by relevance, or the top topics), and a
// question answered with the sections that answer it best, quoted and cited. No model writes these answers.
import { invalidField } from '../core/errors.ts';
import type { Citation } from './conversation.entity.ts';
import { termsOf, type DocHit, type DocsIndex } from './docs.ts';

/** How many sections a question's answer quotes. */
const ANSWER_SECTIONS = 3;

export function docCitation(hit: DocHit): Citation {
  const ref = hit.source === 'openapi' ? `/v1/openapi#${hit.anchor}` : `${hit.source}#${hit.anchor}`;
  return { type: 'doc', id: hit.id, title: hit.title, ref };
}

export function createHelpService(docs: () => DocsIndex) {
  return {
    search(q: string | undefined, limit: number) {
      const query = q?.trim() ? q.trim() : null;
      return { query, results: query === null ? docs().topics(limit) : docs().search(query, limit) };
    },

    ask(question: string) {
      // A question of only filler words ("how do I?") has nothing to search for: a broken rule, not a type error.
      if (!termsOf(question).length) throw invalidField('question', 'must name something to look for in the documentation');
      const results = docs().search(question, ANSWER_SECTIONS);
      const answer = results.length
        ? results.map((hit) => `From "${hit.title}" (${hit.id}): ${hit.snippet}`).join('\n\n')
        : 'Kiln\'s documentation has nothing on that. Try other words, or GET /v1/onboarding/help for the main topics.';
      return { question, answer, citations: results.map(docCitation), results };
    },
  };
}

export type HelpService = ReturnType<typeof createHelpService>;
