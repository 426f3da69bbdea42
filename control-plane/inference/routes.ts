// Inference (the spec's rows POST /inference and POST /inference/test, reference surface): an OpenAI
// request run on one of the caller's deployments, and a short probe of one. Both need deployments:infer.
import { defineRoute, type Route } from '../http/routes.ts';
import type { InferenceService } from './service.ts';
import { InferenceRequest, InferenceStreams, InferenceTestRequest, InferenceTestResult } from './schemas.ts';

const common = { tag: 'Inference', resourceType: 'deployment' } as const;
/** Unknown deployment, not running, bad upstream answer, no replica reachable, upstream silent. */
const ERRORS = [404, 409, 422, 502, 503, 504];

export function inferenceRoutes(inference: InferenceService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'deployments:infer', method: 'POST', path: '/v1/inference', operationId: 'inferV1',
      summary: 'Run an OpenAI chat completion or completion on a deployment; with stream: true the answer is relayed as server-sent events',
      body: InferenceRequest, streams: InferenceStreams, errors: ERRORS,
      handle({ body, state, signal }) {
        return inference.run(state.em, state.principal!, body, signal, (target) => { state.resourceId = target.deploymentId; });
      },
    }),
    defineRoute({
      ...common, permission: 'deployments:infer', method: 'POST', path: '/v1/inference/test', operationId: 'testInferenceV1',
      summary: 'Send a short probe to a deployment: latency, time to first token, tokens and the model its server reports',
      body: InferenceTestRequest, response: InferenceTestResult, errors: ERRORS,
      async handle({ body, state, signal }) {
        const target = await inference.target(state.em, state.principal!, body.deployment);
        state.resourceId = target.deploymentId;
        const { result, auditDetails } = await inference.test(target, body, signal);
        return { data: result, auditDetails };
      },
    }),
  ];
}
