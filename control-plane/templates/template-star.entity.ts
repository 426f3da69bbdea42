import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';

/**
 * A user's star on a template. Stars belong to the user, not to an organization: a public template's count
 * adds up users of every organization, so this is a platform table (no row-level security policy); the
 * service reads it only for templates the caller may see. `templateId` is text, not a foreign key, because
 * catalog presets (which have no row) can be starred too.
 */
export const TemplateStarSchema = defineEntity({
  name: 'TemplateStar',
  extends: BaseSchema,
  // The unique (template_id, user_id) is written in the migration.
  properties: {
    templateId: p.string(),
    user: () => p.manyToOne(UserSchema).ref(),
  },
});

export type TemplateStar = InferEntity<typeof TemplateStarSchema>;
