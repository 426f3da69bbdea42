// Idempotency-Key: the stored answers of creating requests (middleware.ts, applied by the router to routes
// marked idempotent).
import { defineModule } from '../module.ts';

export const idempotencyModule = defineModule({
  name: 'idempotency',
});
