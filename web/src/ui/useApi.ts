import { useCallback, useEffect, useState } from 'react';

/**
 * Loads what a page shows: `const keys = useApi(() => ok(api.GET('/v1/settings/api-keys')), [])`. Answers
 * { data, error, loading, reload, setData }; data stays while reloading, so the page does not flash.
 */
export function useApi<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const run = useCallback(load, deps);
  useEffect(() => {
    let current = true;
    setLoading(true);
    run().then(
      (value) => { if (current) { setData(value); setError(undefined); setLoading(false); } },
      (e: unknown) => { if (current) { setError(e); setLoading(false); } },
    );
    return () => { current = false; };
  }, [run, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload, setData };
}
