// Reads the replace directives of a go.mod, so a wrapper module can repeat the ones a tool needs.

export interface Replace {
  readonly from: string;
  readonly to: string;
  /** Version of the target module; absent for a local directory target. */
  readonly toVersion?: string;
}

export function parseReplaces(goMod: string): Replace[] {
  const replaces: Replace[] = [];
  let inBlock = false;
  for (const raw of goMod.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    if (line === 'replace (') { inBlock = true; continue; }
    if (inBlock && line === ')') { inBlock = false; continue; }
    const body = inBlock ? line : line.startsWith('replace ') ? line.slice('replace '.length).trim() : undefined;
    if (body === undefined) continue;
    const [left, right] = body.split('=>').map((s) => s.trim().split(/\s+/));
    if (!left?.[0] || !right?.[0]) continue;
    replaces.push({ from: left[0], to: right[0], ...(right[1] ? { toVersion: right[1] } : {}) });
  }
  return replaces;
}

export const isLocal = (r: Replace) => r.to.startsWith('./') || r.to.startsWith('../') || r.to.startsWith('/');
