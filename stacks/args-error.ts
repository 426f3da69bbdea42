/** Arguments that break a rule of a stack: fixing the request is the only cure, so callers should not retry. */
export class StackArgsError extends Error {
  override name = 'StackArgsError';
}
