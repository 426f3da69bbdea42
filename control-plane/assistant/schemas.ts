import { z } from 'zod';
import { optionalOrgIdQuery } from '../core/organization-query.ts';
import { CITATION_TYPES } from './conversation.entity.ts';

// ---- /v1/onboarding/help: search over Kiln's documentation ----

export const HelpSearchQuery = z.object({
  q: z.string().trim().max(500).optional().meta({ description: 'Words to search Kiln\'s documentation for; absent or empty: the top help topics.' }),
  limit: z.coerce.number().int().min(1).max(50).default(10).meta({ description: 'How many sections, 1 to 50. Default 10.' }),
});

export const DocHitView = z.object({
  id: z.string().meta({ example: '/docs/concepts/inference#inference-and-the-gateway' }),
  source: z.string().meta({ description: 'The docs page\'s URL (/docs/concepts/inference), or openapi (an API route\'s summary).' }),
  anchor: z.string().meta({ description: 'The section\'s heading anchor in its file, or the route\'s operationId.' }),
  title: z.string(),
  snippet: z.string().meta({ description: 'Where the section matches best (its start for a topic).' }),
  score: z.number().meta({ description: 'BM25 relevance, higher first; 0 for a topic.' }),
}).meta({ id: 'HelpSection' });

export const HelpSearchResult = z.object({
  query: z.string().nullable().meta({ description: 'null: no query, the top topics are answered.' }),
  results: z.array(DocHitView),
}).meta({ id: 'HelpSearchResult' });

const question = z.string().trim().min(1).max(2000);

export const HelpQuestionRequest = z.strictObject({
  question: question.meta({ description: 'A question about Kiln, in words.' }),
}).meta({ id: 'HelpQuestionRequest' });

export const CitationView = z.object({
  type: z.enum(CITATION_TYPES),
  id: z.string().meta({ description: 'The documentation section, deployment or GPU type cited.' }),
  title: z.string(),
  ref: z.string().meta({ description: 'Where to read it: a docs page\'s URL and anchor, or the API path that answers the record.' }),
}).meta({ id: 'Citation' });

export const HelpAnswerView = z.object({
  question: z.string(),
  answer: z.string().meta({ description: 'The best sections\' words, quoted from the documentation (no model writes it).' }),
  citations: z.array(CitationView),
  results: z.array(DocHitView),
}).meta({ id: 'HelpAnswer' });

// ---- /v1/ai-assistant ----

export const AssistantQuery = z.object({
  ...optionalOrgIdQuery,
  limit: z.coerce.number().int().min(1).max(50).default(10).meta({ description: 'How many of your newest conversations, 1 to 50. Default 10.' }),
});

const messageView = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  citations: z.array(CitationView),
  modelDeploymentId: z.string().nullable().meta({ description: 'The deployment that wrote an answer; null: retrieval alone.' }),
  createdAt: z.iso.datetime(),
});

export const AssistantOverview = z.object({
  capabilities: z.array(z.object({ name: z.string(), description: z.string(), needs: z.string().nullable().meta({ description: 'The permission it needs beyond asking; null: none.' }), available: z.boolean().meta({ description: 'Whether your credential holds it.' }) })),
  conversations: z.array(z.object({
    id: z.string().meta({ example: 'cnv_0123456789abcdefghij' }),
    title: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    messages: z.array(messageView).meta({ description: 'Its last 50 turns, oldest first.' }),
  })).meta({ description: 'Your own newest conversations in this organization, newest first.' }),
}).meta({ id: 'AssistantOverview' });

const entityId = z.string().trim().min(1).max(64);

export const AssistantQuestionRequest = z.strictObject({
  question: question.meta({ description: 'What to ask: about Kiln, or about your organization\'s deployments (name their ids, dep_...) and costs.' }),
  conversationId: entityId.optional().meta({ description: 'Continue one of your conversations; absent: a new one.' }),
  deploymentId: entityId.optional().meta({ description: 'One of your organization\'s running deployments (id or name) to write the answer with; absent: retrieval alone.' }),
}).meta({ id: 'AssistantQuestionRequest' });

export const AssistantAnswerView = z.object({
  conversationId: z.string(),
  messageId: z.string(),
  question: z.string(),
  answer: z.string(),
  mode: z.enum(['retrieval', 'model']).meta({ description: 'model: the named deployment wrote the answer from the cited material; retrieval: composed from it directly.' }),
  model: z.object({ deploymentId: z.string(), name: z.string(), error: z.string().nullable().meta({ description: 'Why the model did not answer (its server failed); the answer is then retrieval\'s.' }) }).nullable(),
  citations: z.array(CitationView),
  createdAt: z.iso.datetime(),
}).meta({ id: 'AssistantAnswer' });

export type HelpSearchInput = z.output<typeof HelpSearchQuery>;
export type AssistantQuestionInput = z.output<typeof AssistantQuestionRequest>;
export type AssistantAnswerBody = z.infer<typeof AssistantAnswerView>;
export type AssistantOverviewBody = z.infer<typeof AssistantOverview>;
