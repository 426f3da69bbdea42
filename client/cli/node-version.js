// The Node versions the CLI runs on (package.json engines), checked before any TypeScript is loaded.
export const MINIMUM_NODE_MAJOR = 24;

/** Why this Node cannot run the CLI, in one line with what to do; undefined when it can. */
export function nodeVersionProblem(version) {
  const major = Number.parseInt(String(version).split('.')[0], 10);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return `needs Node.js ${MINIMUM_NODE_MAJOR} or later (this is ${version}): install it (e.g. \`nvm install ${MINIMUM_NODE_MAJOR}\`), or run it as \`npx kiln\` in a Kiln checkout, which brings its own`;
}
