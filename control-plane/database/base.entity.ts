// Shared columns: an opaque, prefixed string id (`org_...`, `dep_...`) and the creation time.
import { defineEntity, p } from '@mikro-orm/core';

export const BaseSchema = defineEntity({
  name: 'BaseEntity',
  abstract: true,
  properties: {
    id: p.string().primary(),
    // Millisecond precision, like a JS Date: a timestamp read back compares equal to the stored one,
    // which keyset cursors rely on.
    createdAt: p.datetime(3).onCreate(() => new Date()),
  },
});
