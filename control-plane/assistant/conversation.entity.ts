import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What an answer used, so a reader can check it: a documentation section or a record of the organization's. */
export const CITATION_TYPES = ['doc', 'deployment', 'event', 'recovery', 'pricing'] as const;
export type CitationType = (typeof CITATION_TYPES)[number];

export interface Citation {
  type: CitationType;
  /** The section's id (`/docs/concepts/inference#inference-and-the-gateway`), the deployment's id, or the GPU type a catalog price is of. */
  id: string;
  title: string;
  /** Where to read it: a documentation file and anchor, or the API path that answers the record. */
  ref: string;
}

/** A user's conversation with the assistant in one organization: theirs alone (no one else lists it). */
export const AssistantConversationSchema = defineEntity({
  name: 'AssistantConversation',
  extends: BaseSchema,
  // GET /v1/ai-assistant lists a user's newest conversations first.
  indexes: [{ properties: ['user', 'organization', 'updatedAt'] }],
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    title: p.string(),
    updatedAt: p.datetime(3).onCreate(() => new Date()),
  },
});

export type AssistantConversation = InferEntity<typeof AssistantConversationSchema>;

/** One turn: the user's question or the assistant's answer with what it cited and the model that wrote it, if any. */
export const AssistantMessageSchema = defineEntity({
  name: 'AssistantMessage',
  extends: BaseSchema,
  indexes: [{ properties: ['conversation', 'createdAt'] }],
  properties: {
    conversation: () => p.manyToOne(AssistantConversationSchema).ref().deleteRule('cascade'),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    role: p.string().$type<'user' | 'assistant'>(),
    content: p.text(),
    citations: p.json<Citation[]>(),
    /** The organization's deployment that wrote the answer; null: retrieval alone. */
    modelDeploymentId: p.string().nullable(),
  },
});

export type AssistantMessage = InferEntity<typeof AssistantMessageSchema>;
