// /v1/onboarding/help (Kiln's documentation searched, a question answered from it) and /v1/ai-assistant (a
// question answered from the documentation and the caller's own organization data, and the caller's
// conversations). The documentation is public, as /v1/openapi is: help needs no credential (calls without one
// are limited per client address). The assistant is each user's own, as their notifications are: profile:read
// asks and lists; what it reads of the organization needs the permission the REST route reading it needs
// (deployments:read), checked as it reads, and a named model needs deployments:infer.
import { defineRoute, type Route } from '../http/routes.ts';
import type { HelpService } from './help.ts';
import {
  AssistantAnswerView, AssistantOverview, AssistantQuery, AssistantQuestionRequest, HelpAnswerView, HelpQuestionRequest, HelpSearchQuery, HelpSearchResult,
} from './schemas.ts';
import type { AssistantService } from './service.ts';

export function helpRoutes(help: HelpService): Route[] {
  const common = { tag: 'Onboarding', resourceType: 'documentation', permission: 'public' } as const;
  return [
    defineRoute({
      ...common, method: 'GET', path: '/v1/onboarding/help', operationId: 'searchHelp',
      summary: 'Search Kiln\'s documentation (the docs site\'s pages and the API routes): sections ranked by relevance with a snippet; without q, the top help topics',
      query: HelpSearchQuery, response: HelpSearchResult,
      handle: async ({ query }) => ({ data: help.search(query.q, query.limit) }),
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/onboarding/help', operationId: 'askHelp',
      summary: 'Ask a question about Kiln: answered with the documentation sections that answer it best, quoted and cited',
      body: HelpQuestionRequest, response: HelpAnswerView, errors: [422],
      handle: async ({ body }) => ({ data: help.ask(body.question) }),
    }),
  ];
}

export function assistantRoutes(assistant: AssistantService): Route[] {
  const common = { tag: 'Assistant', resourceType: 'assistant_conversation', permission: 'profile:read' } as const;
  return [
    defineRoute({
      ...common, method: 'GET', path: '/v1/ai-assistant', operationId: 'assistantOverview',
      summary: 'What the assistant can do with your credential, and your own recent conversations with it in this organization',
      query: AssistantQuery, response: AssistantOverview,
      handle: async ({ query, state }) => ({ data: await assistant.overview(state.em, state.principal!, query.limit) }),
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/ai-assistant', operationId: 'askAssistant',
      summary: 'Ask the assistant: answered from Kiln\'s documentation and what you may read of your organization (deployments, their failures and costs), citing what it used; optionally written by one of your running deployments',
      body: AssistantQuestionRequest, response: AssistantAnswerView, errors: [404, 409],
      handle: async ({ body, state, signal }) => {
        const answer = await assistant.ask(state.em, state.principal!, body, signal);
        state.resourceId = answer.conversationId;
        return { data: answer };
      },
    }),
  ];
}
