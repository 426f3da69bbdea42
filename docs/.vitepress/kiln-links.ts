// Links as Kiln's own files write them, made right for the site before VitePress resolves and checks them:
// - Kiln's API paths (/api/..., /v1/..., such as the served OpenAPI documents /api/openapi.json and
//   /v1/openapi) are Kiln's, outside the site: left as written and opened by the browser, not the site's
//   router, and not checked as pages.
// - /docs/x (the site as Kiln serves it) is the site's page /x, and docs/x (a link of README.md or
//   ARCHITECTURE.md, written from the repository's root and included in a page with
//   <!--@include: ../../ARCHITECTURE.md-->) too: VitePress then checks it as any other.
import type { MarkdownRenderer } from 'vitepress';

// /api alone is the site's API reference page (docs/api.md), so no page of the site lives under api/ or v1/.
const KILN_PATH = /^\/(api|v1)\//;
const SITE_PATH = /^\/?docs(\/|$)/;

export function kilnLinks(md: MarkdownRenderer): void {
  md.core.ruler.push('kiln-links', (state) => {
    for (const block of state.tokens) {
      for (const token of block.children ?? []) {
        const href = token.type === 'link_open' ? token.attrGet('href') : null;
        if (href === null) continue;
        // VitePress leaves a link with a target alone, and its router lets the browser follow it.
        if (KILN_PATH.test(href)) token.attrSet('target', '_self');
        else if (SITE_PATH.test(href)) token.attrSet('href', `/${href.replace(SITE_PATH, '')}`);
      }
    }
  });
}
