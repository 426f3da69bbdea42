// GraphQL's object types are read off the REST views (control-plane/graphql/view-types.ts): every field of a
// view is a field of its GraphQL type, typed from its zod schema.
import test from 'ava';
import { GraphQLObjectType } from 'graphql';
import type { z } from 'zod';
import { ApiKeyView, RevokedApiKey } from '../../control-plane/api-keys/schemas.ts';
import { UsageView } from '../../control-plane/billing/schemas.ts';
import { PaginationSchema } from '../../control-plane/core/pagination.ts';
import { DeletedDeployment, DeploymentView } from '../../control-plane/deployments/schemas.ts';
import { buildSchema, type SchemaServices } from '../../control-plane/graphql/schema.ts';
import { ModelView } from '../../control-plane/models/schemas.ts';
import { MemberView } from '../../control-plane/team/schemas.ts';
import { TemplateView } from '../../control-plane/templates/schemas.ts';

// Building the schema calls no service: only resolvers do.
const schema = buildSchema({} as SchemaServices);

function fieldsOf(typeName: string) {
  const type = schema.getType(typeName);
  if (!(type instanceof GraphQLObjectType)) throw new Error(`no object type ${typeName}`);
  return Object.fromEntries(Object.entries(type.getFields()).map(([name, field]) => [name, String(field.type)]));
}

const VIEWS: Array<[string, z.ZodObject]> = [
  ['Deployment', DeploymentView], ['DeletedDeployment', DeletedDeployment], ['Model', ModelView], ['Template', TemplateView],
  ['ApiKey', ApiKeyView], ['RevokedApiKey', RevokedApiKey], ['Member', MemberView], ['Usage', UsageView], ['DeploymentPage', PaginationSchema],
];

for (const [typeName, view] of VIEWS) {
  test(`${typeName} has every field of its REST view`, (t) => {
    const fields = fieldsOf(typeName);
    t.deepEqual(Object.keys(view.shape).filter((field) => !(field in fields)), []);
  });
}

test('each field\'s GraphQL type follows from its zod type', (t) => {
  const deployment = fieldsOf('Deployment');
  t.like(deployment, {
    id: 'ID', status: 'String', state: 'String', createdAt: 'String', replicas: 'Int', contextLength: 'Int',
    vllmArgs: '[String!]', autoscaling: 'JSON', templateId: 'String',
  });
  t.like(fieldsOf('Model'), { parametersBillion: 'Float', gated: 'Boolean' });
  t.like(fieldsOf('Member'), { userId: 'ID' });
  t.like(fieldsOf('Usage'), { deployments: '[UsageLine!]', period: 'JSON' });
  t.like(fieldsOf('UsageLine'), { deploymentId: 'ID', gpuHours: 'Float', costCents: 'Int' });
  t.like(fieldsOf('Template'), { configuration: 'JSON' });
  t.like(fieldsOf('RevokedApiKey'), { revoked: 'Boolean' });
});
