// Errors: services throw these classes; the error middleware (http/error-handler.ts) maps them through
// ERROR_TABLE to a status and code and renders them in the surface's own format.
import { STATUS_CODES } from 'node:http';
import { ConnectionException } from '@mikro-orm/core';
import { PrometheusUnavailableError } from '../../lib/prometheus/client.ts';

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  readonly details: ErrorDetails;
  /** Extra response headers (Retry-After on 429). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(message: string, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super(message);
    this.details = details;
    this.headers = headers;
  }
}

/** Unparseable input or wrong types: names the offending field or parameter. */
export class BadRequestError extends ApiError {}
export class MalformedJsonError extends ApiError {}
/** Input that parses but breaks a rule. */
export class ValidationError extends ApiError {}
export class InvalidModelError extends ApiError {}
/** A missing, invalid, revoked or expired credential. */
export class UnauthenticatedError extends ApiError {}
/** A wrong email or password at sign-in (distinct from a bad token or key). */
export class InvalidCredentialsError extends ApiError {}
export class ForbiddenError extends ApiError {}
export class InsufficientCreditsError extends ApiError {}
/** A budget of the organization (a spend alert rule that acts) is reached: new deployments and scale-ups are refused; details name it. */
export class BudgetExceededError extends ApiError {}
export class NotFoundError extends ApiError {}
export class DeploymentNotFoundError extends ApiError {}
export class ConflictError extends ApiError {}
/** Deleting something still in use (a custom role some members hold). */
export class InUseError extends ApiError {}
export class IdempotencyConflictError extends ApiError {}
export class MethodNotAllowedError extends ApiError {}
export class PayloadTooLargeError extends ApiError {}
export class UnsupportedMediaTypeError extends ApiError {}
/** A route that only answers a protocol upgrade (GET /v1/ws) was asked without one. */
export class UpgradeRequiredError extends ApiError {}
export class RateLimitedError extends ApiError {}
export class ServiceUnavailableError extends ApiError {}
/** The database is paused, unreachable or refusing (health/dependencies.ts says so): retry shortly. */
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor() {
    super('The database is unavailable: retry shortly (a creating request with the same Idempotency-Key is answered once)', { dependency: 'database' }, { 'Retry-After': '5' });
  }
}

/**
 * One field of the request at fault, in the shape every validation answer has (`details.fields`): a rule
 * broken (422) by default, or malformed input (400) with `kind` BadRequestError.
 */
export function invalidField(field: string, message: string, kind: typeof BadRequestError | typeof ValidationError = ValidationError): ApiError {
  return new kind(`Invalid field ${field}: ${message}`, { fields: [{ field, message }] });
}
/** No ready cluster offers the GPU type, or its provisioning circuit is open. */
export class GpuUnavailableError extends ApiError {}
/** Inference on a deployment that is not serving (stopped, failed, still deploying...): details carry its status. */
export class DeploymentNotRunningError extends ApiError {}
/** The model server refused the inference request (4xx): its message is passed on. */
export class InferenceRejectedError extends ApiError {}
/** The model server failed (5xx) or broke its answer off. */
export class UpstreamError extends ApiError {}
/** No ready replica of the deployment, or none could be reached; answered with Retry-After. */
export class ReplicaUnavailableError extends ApiError {}
/** The model server stayed silent past the gateway's timeout. */
export class UpstreamTimeoutError extends ApiError {}
/** Stripe is not configured (no STRIPE_SECRET_KEY): checkout, the portal and the payment webhooks are off, the rest of Kiln works. */
export class PaymentsUnavailableError extends ApiError {}
/** The request's headers did not all arrive in time (the HTTP server's headersTimeout): answered by the server itself (http/client-error.ts). */
export class RequestTimeoutError extends ApiError {}
/** The request line and headers are over Node's limit (16 KB): answered by the HTTP server itself (http/client-error.ts). */
export class RequestHeadersTooLargeError extends ApiError {}
/** The client went away before its answer was complete: work on its behalf stops. Nobody reads the answer; the audit record shows it. */
export class ClientClosedError extends ApiError {}

type ErrorClass = abstract new (...args: never[]) => ApiError;

/** Each error class's status, code and what it means to a client (the errors reference is generated from it). */
export const ERROR_TABLE: ReadonlyArray<readonly [ErrorClass, number, string, string]> = [
  [BadRequestError, 400, 'INVALID_REQUEST', 'The request is malformed: a wrong type, a missing field, a bad query parameter or header (`details` names it).'],
  [MalformedJsonError, 400, 'INVALID_JSON', 'The body is not valid JSON.'],
  [InvalidModelError, 400, 'INVALID_MODEL', 'Kiln cannot load the model reference (not a model vLLM can serve, or not found on the Hub).'],
  [InferenceRejectedError, 400, 'INFERENCE_REJECTED', 'The model server refused the inference request as invalid (its own message is passed on).'],
  [UnauthenticatedError, 401, 'INVALID_API_KEY', 'No credential, or one that is unknown, expired or revoked: log in again, or use a valid key.'],
  [InvalidCredentialsError, 401, 'INVALID_CREDENTIALS', 'The e-mail and password do not match.'],
  [InsufficientCreditsError, 402, 'INSUFFICIENT_CREDITS', 'The balance does not cover one hour of the capacity asked for: top up, or ask for less. Nothing changed.'],
  [BudgetExceededError, 402, 'BUDGET_EXCEEDED', 'A budget that acts has been reached: new deployments and growth are refused until it resets or is raised.'],
  [ForbiddenError, 403, 'INSUFFICIENT_PERMISSIONS', 'The credential\'s role or scope does not allow this, or it names an organization it does not belong to.'],
  [NotFoundError, 404, 'NOT_FOUND', 'No such resource in the caller\'s organization (another organization\'s records are not found either), or no such path.'],
  [DeploymentNotFoundError, 404, 'DEPLOYMENT_NOT_FOUND', 'No deployment of that id or name in the caller\'s organization.'],
  [MethodNotAllowedError, 405, 'METHOD_NOT_ALLOWED', 'The path does not take this method; `Allow` lists the ones it takes.'],
  [ConflictError, 409, 'RESOURCE_EXISTS', 'The request conflicts with what exists: a name already taken in the organization (creating a deployment named as one that exists, a secret, a cluster), or a state that does not allow it (retrying a deployment that has not failed, changing one being deleted, replicas that do not fit now). The message says which; `details` names the field.'],
  [InUseError, 409, 'RESOURCE_IN_USE', 'The resource is still used (a secret or model a deployment uses, a role a member holds): the message names what uses it.'],
  [DeploymentNotRunningError, 409, 'DEPLOYMENT_NOT_RUNNING', 'The deployment cannot answer inference in its current status (the message names it): wait for `running`, or start it.'],
  [IdempotencyConflictError, 409, 'IDEMPOTENCY_KEY_REUSED', 'The `Idempotency-Key` was used with a different request, or its first request is still running: retry once it has answered.'],
  [RequestTimeoutError, 408, 'REQUEST_TIMEOUT', 'The request (its headers, or all of it) did not arrive within the server\'s time limit: send it again.'],
  [PayloadTooLargeError, 413, 'PAYLOAD_TOO_LARGE', 'The body is over the size limit.'],
  [UnsupportedMediaTypeError, 415, 'UNSUPPORTED_MEDIA_TYPE', 'The body is not JSON (send `Content-Type: application/json`).'],
  [ValidationError, 422, 'VALIDATION_ERROR', 'The request is well formed but breaks a rule (a name that is not a DNS label, replicas out of bounds...): `details.fields` names each field and why.'],
  [UpgradeRequiredError, 426, 'UPGRADE_REQUIRED', 'The path opens a WebSocket: connect with a WebSocket client (`Upgrade: websocket`).'],
  [RateLimitedError, 429, 'RATE_LIMIT_EXCEEDED', 'Over the rate limit of the credential or the organization: `Retry-After` says when to retry.'],
  [RequestHeadersTooLargeError, 431, 'REQUEST_HEADERS_TOO_LARGE', 'The request line (the URL) and headers together are over 16 KB: send long values in a JSON body.'],
  // nginx's status for a request its client abandoned.
  [ClientClosedError, 499, 'CLIENT_CLOSED_REQUEST', 'The client closed the connection before the answer (recorded, never sent).'],
  [UpstreamError, 502, 'UPSTREAM_ERROR', 'The model server (or another service Kiln relays to) failed or answered with an error.'],
  [ServiceUnavailableError, 503, 'SERVICE_UNAVAILABLE', 'A service Kiln depends on is unreachable (the database, Temporal, Prometheus, the identity provider): retry shortly.'],
  [GpuUnavailableError, 503, 'GPU_UNAVAILABLE', 'No GPU cluster offers the GPU type now, or its provisioning circuit is open after failed attempts (`Retry-After` says when it is tried again).'],
  [ReplicaUnavailableError, 503, 'REPLICA_UNAVAILABLE', 'The deployment has no Ready replica to answer now: retry after `Retry-After`.'],
  [PaymentsUnavailableError, 503, 'PAYMENTS_UNAVAILABLE', 'Payments are not configured on this Kiln (no Stripe key).'],
  [UpstreamTimeoutError, 504, 'UPSTREAM_TIMEOUT', 'The model server did not answer in time.'],
];

export interface ErrorDescription {
  status: number;
  code: string;
  message: string;
  details: ErrorDetails;
  headers: Readonly<Record<string, string>>;
}

const INTERNAL: ErrorDescription = { status: 500, code: 'INTERNAL_ERROR', message: 'Internal server error', details: {}, headers: {} };

/**
 * PostgreSQL refused a value itself (SQLSTATE class 22: too long, out of range, a bad date or character).
 * Validation should have caught it first; when it did not, the request, not the server, is at fault.
 */
export function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

/** Status, code and public message of anything thrown; unknown errors become a bare 500. */
export function describeError(error: unknown): ErrorDescription {
  if (error instanceof ApiError) {
    const row = ERROR_TABLE.find(([cls]) => error instanceof cls);
    if (row) return { status: row[1], code: row[2], message: error.message, details: error.details, headers: error.headers };
  }
  // The database being unreachable is an outage, not a bug: clients should retry.
  if (error instanceof ConnectionException) {
    return { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable', details: {}, headers: {} };
  }
  // Metrics come from Prometheus (lib/prometheus): its absence is an outage of that store, retried shortly.
  if (error instanceof PrometheusUnavailableError) {
    return { status: 503, code: 'SERVICE_UNAVAILABLE', message: error.message, details: {}, headers: { 'Retry-After': '10' } };
  }
  if (isDataException(error)) {
    return { status: 400, code: 'INVALID_REQUEST', message: 'A value in the request is too long, out of range or not storable', details: {}, headers: {} };
  }
  return INTERNAL;
}

/** The reason phrase, used as the reference API's `error` field. */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}
