// A heavy library loaded the first time it is needed instead of when the API starts: GraphQL, Stripe, PDF
// and SMTP serve a few routes, and most processes that load the API (each test file, `kiln` commands run
// in-process, a replica that never renders an invoice) would otherwise pay for them at start-up.
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined; // a failed load is tried again next time
      throw error;
    });
    return loaded;
  };
}
