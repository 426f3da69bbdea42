// Which replica takes the next request: the one with the fewest requests in flight from this process, as
// production-stack's router balances; ties are taken in turn, so an idle deployment's requests still spread.
import type { Replica } from './replicas.ts';

const keyOf = (replica: Replica) => `${replica.address}:${replica.port}`;

export function createBalancer() {
  const inFlight = new Map<string, number>();
  let turn = 0;
  const load = (replica: Replica) => inFlight.get(keyOf(replica)) ?? 0;

  return {
    /** The least loaded of `replicas`; undefined when there is none. */
    choose(replicas: readonly Replica[]): Replica | undefined {
      if (!replicas.length) return undefined;
      const least = Math.min(...replicas.map(load));
      const candidates = replicas.filter((r) => load(r) === least);
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      return candidates[turn % candidates.length];
    },

    /** Counts a request to `replica` as in flight until the function returned is called (any number of times). */
    begin(replica: Replica): () => void {
      const key = keyOf(replica);
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        const left = (inFlight.get(key) ?? 1) - 1;
        if (left) inFlight.set(key, left);
        else inFlight.delete(key);
      };
    },
  };
}

export type Balancer = ReturnType<typeof createBalancer>;
