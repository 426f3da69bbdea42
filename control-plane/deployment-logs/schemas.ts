// Request and answer shapes of GET /v1/deployments/{id}/logs.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';

/** The most lines one answer holds (and, when following, each pod's history). */
export const MAX_TAIL = 10_000;

export const DeploymentLogsQuery = z.strictObject({
  ...orgIdQuery,
  tail: z.coerce.number().int().min(1).max(MAX_TAIL).default(100)
    .meta({ description: `The newest lines to answer, 1 to ${MAX_TAIL}; default 100. With follow, each pod's newest lines before its new ones.` }),
  since: z.iso.datetime({ offset: true }).optional()
    .meta({ description: 'ISO 8601 timestamp: only lines written at or after it.', example: '2026-11-24T09:00:00Z' }),
  pod: z.string().min(1).max(253).optional()
    .meta({ description: 'One of the deployment\'s pods: its lines alone (another name is 422).' }),
  follow: z.enum(['true', 'false']).default('false').transform((v) => v === 'true')
    .meta({ description: 'true: a text/event-stream of the lines as they are written, until the client leaves or the stream\'s time is up.' }),
}).transform((q) => ({ orgId: q.orgId, tail: q.tail, since: q.since === undefined ? undefined : new Date(q.since), pod: q.pod, follow: q.follow }));
export type DeploymentLogsInput = z.output<typeof DeploymentLogsQuery>;

export const DeploymentLogLine = z.object({
  pod: z.string().meta({ example: 'chat-5d8f7c9b6d-x2x9q' }),
  time: z.string().meta({ description: 'When the container wrote the line, as its node recorded it (RFC 3339, up to nanoseconds).', example: '2026-11-24T09:12:01.532114Z' }),
  line: z.string().meta({ description: 'The line as the model server wrote it (cut at 16,384 characters).', example: 'INFO:     10.0.0.12:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK' }),
}).meta({ id: 'DeploymentLogLine' });
export type DeploymentLogLineBody = z.infer<typeof DeploymentLogLine>;

export const DeploymentLogStreams = {
  'application/json': z.array(DeploymentLogLine).meta({
    id: 'DeploymentLogs',
    description: 'Without follow: the newest `tail` lines across the deployment\'s pods (or `pod`), oldest first. A deployment with no pods (stopped) has none.',
  }),
  'text/event-stream': z.string().meta({
    description: 'With follow=true: each line as a `data: <DeploymentLogLine JSON>` event, each pod\'s newest `tail` lines first, then new lines as the '
      + 'pods write them (pods interleaved as their lines arrive); `: keep-alive` comments while quiet. Ends with `event: end` and `data: {"reason": '
      + '"timeout"}` (the stream\'s time is up: reconnect with `since`) or `"ended"` (the pods\' logs closed), or when the client leaves.',
  }),
};
