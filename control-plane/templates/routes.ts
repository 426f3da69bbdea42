// Templates on the reference surface (/v1/templates/..., /v1/models/templates, the deployment rows that make
// or compare templates, /v1/notifications/template-updates) and the platform's /api/models/templates.
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import { DeploymentCreation } from '../deployments/schemas.ts';
import type { TemplateService } from './service.ts';
import {
  CreateTemplateRequest, DeletedTemplate, DeploymentIdParams, DeployTemplateRequest, ListTemplatesPlatformQuery, ListTemplatesQuery, ListVersionsQuery, NewTemplateVersionRequest,
  OutdatedDeployment, PreviewQuery, ShareAsTemplateRequest, StarQuery, StarRequest, StarView, TemplateDeployPreview, TemplateIdParams, TemplateUpdates,
  TemplateUpdatesQuery, TemplateVersionView, TemplateView, UpdateTemplateUpdatesRequest,
} from './schemas.ts';

const common = { tag: 'Templates', resourceType: 'template' } as const;

const DeployedFromTemplate = DeploymentCreation.extend({ templateId: z.string(), templateVersion: z.number().int() }).meta({ id: 'DeployedFromTemplate' });
const SharedTemplate = TemplateVersionView.extend({ templateName: z.string() }).meta({ id: 'SharedTemplate' });

export function templateRoutes(templates: TemplateService): Route[] {
  // One list for both questions: what can I deploy (/templates/deploy) and which templates are there for
  // models (/models/templates, with `model` to narrow it to one).
  const list = (path: string, operationId: string, query: typeof ListTemplatesQuery | typeof ListTemplatesPlatformQuery, tag: string = common.tag) => defineRoute({
    ...common, tag, permission: 'templates:read', method: 'GET', path, operationId,
    summary: 'Deployment templates you can deploy: catalog presets, public templates and your organization\'s, the ones you starred first, then by name (cursor pages; `model` narrows to one model)',
    query, response: z.array(TemplateView), list: true,
    handle: async ({ query, state }) => pageReply(await templates.list(state.em, state.principal!, query)),
  });
  return [
    list('/v1/templates/deploy', 'listDeployableTemplates', ListTemplatesQuery),
    list('/v1/models/templates', 'listModelTemplates', ListTemplatesQuery, 'Models'),
    list('/api/models/templates', 'listModelTemplatesPlatform', ListTemplatesPlatformQuery, 'Models'),
    defineRoute({
      ...common, permission: 'templates:write', method: 'POST', path: '/v1/templates/deploy', operationId: 'createTemplate',
      summary: 'Create a template and its first version (private unless asked otherwise)',
      body: CreateTemplateRequest, response: TemplateView, successStatus: 201, errors: [409, 422],
      handle: async ({ body, state }) => ({ data: await templates.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, permission: 'templates:read', method: 'GET', path: '/v1/templates/{id}/versions', operationId: 'listTemplateVersions',
      summary: 'A template\'s versions, newest first (cursor pages)',
      params: TemplateIdParams, query: ListVersionsQuery, response: z.array(TemplateVersionView), list: true, errors: [404],
      handle: async ({ params, query, state }) => pageReply(await templates.versions(state.em, state.principal!, params.id, query)),
    }),
    defineRoute({
      ...common, permission: 'templates:read', method: 'GET', path: '/v1/templates/{id}/star', operationId: 'getTemplateStar',
      summary: 'Whether you starred a template, and how many users did',
      params: TemplateIdParams, query: StarQuery, response: StarView, errors: [404],
      handle: async ({ params, state }) => ({ data: await templates.starStatus(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'templates:write', method: 'POST', path: '/v1/templates/{id}/star', operationId: 'starTemplate',
      summary: 'Star a template (again changes nothing); you are subscribed to its updates',
      params: TemplateIdParams, body: StarRequest, optionalBody: true, response: StarView, errors: [404],
      handle: async ({ params, state }) => {
        state.resourceId = params.id;
        return { data: await templates.star(state.em, state.principal!, params.id) };
      },
    }),
    defineRoute({
      ...common, permission: 'templates:write', method: 'DELETE', path: '/v1/templates/{id}/star', operationId: 'unstarTemplate',
      summary: 'Take your star back (your subscription to its updates stays)',
      params: TemplateIdParams, response: StarView, errors: [404],
      handle: async ({ params, state }) => {
        state.resourceId = params.id;
        return { data: await templates.unstar(state.em, state.principal!, params.id) };
      },
    }),
    defineRoute({
      ...common, permission: 'templates:write', method: 'DELETE', path: '/v1/templates/{id}', operationId: 'deleteTemplate',
      summary: 'Delete a template your organization owns, with its versions, stars and subscriptions; deployments made from it keep running as they are',
      params: TemplateIdParams, response: DeletedTemplate, errors: [403, 404],
      handle: async ({ params, state }) => {
        state.resourceId = params.id;
        return { data: await templates.remove(state.em, state.principal!, params.id) };
      },
    }),
    defineRoute({
      ...common, permission: 'templates:write', method: 'POST', path: '/v1/templates/{id}/new-version', operationId: 'createTemplateVersion',
      summary: 'Add a version to a template your organization owns (fields left out keep the latest version\'s); its subscribers are notified',
      params: TemplateIdParams, body: NewTemplateVersionRequest, response: TemplateVersionView, successStatus: 201, errors: [403, 404, 409, 422],
      handle: async ({ params, body, state }) => {
        state.resourceId = params.id;
        return { data: await templates.newVersion(state.em, state.principal!, params.id, body) };
      },
    }),
    defineRoute({
      ...common, permission: 'templates:read', method: 'GET', path: '/v1/templates/{id}/deploy', operationId: 'previewTemplateDeploy',
      summary: 'What deploying a template\'s latest (or `version`) would create, and its cost per hour',
      params: TemplateIdParams, query: PreviewQuery, response: TemplateDeployPreview, errors: [404, 422],
      handle: async ({ params, query, state }) => ({ data: await templates.preview(state.em, state.principal!, params.id, query.version) }),
    }),
    defineRoute({
      ...common, creates: 'deployment', permission: 'deployments:write', method: 'POST', path: '/v1/templates/{id}/deploy', operationId: 'deployTemplate',
      summary: 'Create a deployment from a template\'s latest (or `version`), as POST /v1/deployments creates one; it remembers the template and version',
      params: TemplateIdParams, body: DeployTemplateRequest, response: DeployedFromTemplate, successStatus: 201, idempotent: true, errors: [402, 404, 409, 422, 503],
      handle: async ({ params, body, state }) => {
        state.resourceId = params.id;
        return { data: await templates.deploy(state.em, state.principal!, params.id, body) };
      },
    }),
    defineRoute({
      ...common, resourceType: 'deployment', permission: 'templates:write', method: 'POST', path: '/v1/deployments/{id}/share-as-template', operationId: 'shareDeploymentAsTemplate',
      summary: 'Capture a deployment\'s configuration as a new template, or (templateId) a new version of one your organization owns; the deployment then follows it',
      params: DeploymentIdParams, body: ShareAsTemplateRequest, response: SharedTemplate, successStatus: 201, errors: [403, 404, 409, 422],
      handle: async ({ params, body, state }) => {
        state.resourceId = params.id;
        return { data: await templates.shareDeployment(state.em, state.principal!, params.id, body) };
      },
    }),
    defineRoute({
      ...common, resourceType: 'deployment', permission: 'deployments:read', method: 'GET', path: '/v1/deployments/outdated-templates', operationId: 'listOutdatedTemplateDeployments',
      summary: 'Your organization\'s deployments whose template has a newer version, with what it changes; upgrade with PATCH /api/deployments/{id} {"templateVersion": N}',
      response: z.array(OutdatedDeployment),
      handle: async ({ state }) => ({ data: await templates.outdated(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, tag: 'Notifications', permission: 'templates:read', method: 'GET', path: '/v1/notifications/template-updates', operationId: 'getTemplateUpdates',
      summary: 'Your subscriptions to template updates (templates you starred or deployed, or asked for) and the updates you have not marked seen',
      query: TemplateUpdatesQuery, response: TemplateUpdates,
      handle: async ({ state }) => ({ data: await templates.updates(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, tag: 'Notifications', permission: 'templates:write', method: 'PATCH', path: '/v1/notifications/template-updates', operationId: 'changeTemplateUpdates',
      summary: 'Subscribe to or unsubscribe from templates\' updates, and mark updates seen',
      body: UpdateTemplateUpdatesRequest, response: TemplateUpdates, errors: [422],
      handle: async ({ body, state }) => ({ data: await templates.changeUpdates(state.em, state.principal!, body) }),
    }),
  ];
}
