// The documentation site the tests serve: docs/.vitepress/dist, built first if it is missing or stale (npm test
// has built it already).
import { DOCS_DIST } from '../../control-plane/config.ts';
import { buildDocs, docsBuild } from '../../infra/docs-build.ts';
import { staleReason } from '../../infra/stale-build.ts';

export async function docsDistForTests(): Promise<string> {
  if (await staleReason(docsBuild)) await buildDocs();
  return DOCS_DIST;
}
