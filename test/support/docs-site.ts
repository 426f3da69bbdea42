// The documentation site the tests serve: docs/.vitepress/dist, built first if it is missing or stale (npm test
// has built it already).
import { DOCS_DIST } from '../../control-plane/config.ts';
import { buildDocs, docsBuildReason } from '../../infra/docs-build.ts';

export async function docsDistForTests(): Promise<string> {
  if (await docsBuildReason()) await buildDocs();
  return DOCS_DIST;
}
