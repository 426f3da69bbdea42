// What middleware leaves on ctx.state for later middleware and handlers.
import type { Logger } from 'pino';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditDetails } from '../audit/service.ts';
import type { Principal } from '../auth/principal.ts';
import type { ApiError } from '../core/errors.ts';
import type { Surface } from './surface.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  surface: Surface;
  /** Forked per request: the identity map never leaks between requests. */
  em: EntityManager;
  /** The caller, when a credential was sent and is valid. */
  principal?: Principal;
  /** Why the credential sent was rejected; raised only if the route is not public. */
  authError?: ApiError;
  /** Id of the resource the request acted on, for the audit record. */
  resourceId?: string;
  /** The matched route's path as declared (`/api/deployments/{id}`), whatever the URL's ids. */
  route?: string;
  /** Audit name of the matched route (its operationId). */
  action?: string;
  resourceType?: string;
  /** Added to the audit record; a promise when only the end of a streamed answer tells them. */
  auditDetails?: AuditDetails | Promise<AuditDetails>;
  /** The streamed answer's reads query no database (StreamReply.readsNoDatabase). */
  streamReadsNoDatabase?: boolean;
  /** The route's query, path parameters and body, validated by its schemas. */
  input?: { query: unknown; params: unknown; body: unknown };
  /** Set by the idempotency middleware: the request answers with this resource, which its first attempt created. */
  idempotentReplayOf?: string;
}
