// Shared columns: an opaque, prefixed string id (`org_...`, `dep_...`) and the creation time.
import { defineEntity, p } from '@mikro-orm/core';

export const BaseSchema = defineEntity({
  name: 'BaseEntity',
  abstract: true,
  properties: {
    id: p.string().primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
