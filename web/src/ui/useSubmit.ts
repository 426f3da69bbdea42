import { useCallback, useState, type FormEvent } from 'react';
import { fieldErrors } from './errors.ts';

/** What an action answers when it has sent the browser elsewhere (a checkout, a navigation): it stays busy. */
export type Leaving = 'leaving';

/**
 * A form's (or a button's) action with its busy state and error, as every page sends things:
 * `const save = useSubmit()` then `<form onSubmit={save.onSubmit(async (form) => { ... })}>`, `disabled={save.busy}`,
 * `<ErrorBanner error={save.error} />` and `error={save.fields.name}`. Each run clears the last error; a failure
 * is kept in `error` (and its fields in `fields`) for the page to show.
 */
export function useSubmit() {
  // Which action runs (a page with several buttons says which one is busy); undefined: none.
  const [pending, setPending] = useState<string>();
  const [error, setError] = useState<unknown>();

  const run = useCallback(async (action: () => Promise<void | Leaving>, what = 'submit') => {
    setPending(what);
    setError(undefined);
    let leaving = false;
    try {
      leaving = (await action()) === 'leaving';
    } catch (e) {
      setError(e);
    } finally {
      // Leaving, the control stays busy so it is not pressed twice while the page goes.
      if (!leaving) setPending(undefined);
    }
  }, []);

  /** The form's submit handler: the action gets the form's values (and the form, e.g. to reset it). */
  const onSubmit = (action: (form: FormData, element: HTMLFormElement) => Promise<void | Leaving>) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    void run(() => action(form, element));
  };

  return { busy: pending !== undefined, pending, error, fields: fieldErrors(error), setError, run, onSubmit };
}
