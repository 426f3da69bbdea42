// Which rows a route's queries may touch, once its caller is authorized (core/row-level-security.ts).
// Everything before (authentication looks credentials and memberships up before the organization is known)
// and everything a route does for one organization's caller runs accordingly.
import { Readable } from 'node:stream';
import type { Middleware } from 'koa';
import type { Permission } from '../core/permissions.ts';
import { asOrganization, bypassingRowLevelSecurity } from '../core/row-level-security.ts';
import type { AppState } from './context.ts';

export function databaseScope(permission: Permission): Middleware<AppState> {
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    // Bypasses row-level security: sign-in, sign-up and the other public routes (no organization yet), the
    // internal metrics (no caller at all), platform administration (every organization's rows), and the
    // service role key, which the spec grants that bypass.
    if (permission === 'public' || permission === 'internal' || permission.startsWith('admin:') || !principal || principal.kind === 'service') return bypassingRowLevelSecurity(next);
    const { organizationId } = principal;
    await asOrganization(organizationId, next);
    // A streamed answer is read after the handler returned, outside its scope: each read (and the queries
    // behind it, such as an export's later batches) runs in the scope again, unless its reads query nothing.
    if (ctx.body instanceof Readable && !ctx.state.streamReadsNoDatabase) ctx.body = Readable.from(inScope(ctx.body, organizationId), { objectMode: false });
  };
}

async function* inScope(source: Readable, organizationId: string): AsyncGenerator<unknown> {
  const chunks = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await asOrganization(organizationId, () => chunks.next());
      if (step.done) return;
      yield step.value;
    }
  } finally {
    // The answer ended early (the client left): the source stops too.
    await chunks.return?.();
  }
}
