import { useId, type InputHTMLAttributes, type ReactNode } from 'react';

export interface FieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> {
  label: string;
  /** A line under the label saying what is expected. */
  hint?: ReactNode;
  /** The field's error (from fieldErrors(error)[name]): shown under it, announced, and the input marked invalid. */
  error?: string;
}

/** What FieldFrame gives its control: its id, and the hint and error it is described by. */
export interface ControlProps {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

/**
 * The label, hint and error around one control (an input, a select), wired for screen readers; every
 * labelled control uses it: `<FieldFrame label="Region" hint="..." error={...}>{(control) => <select {...control} />}</FieldFrame>`.
 */
export function FieldFrame({ label, hint, error, children }: { label: string; hint?: ReactNode; error?: string; children(control: ControlProps): ReactNode }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={error ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p id={`${id}-hint`} className="field-hint">
          {hint}
        </p>
      )}
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described })}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** A labelled input with its hint and its error, wired for screen readers. */
export function Field({ label, hint, error, ...input }: FieldProps) {
  return (
    <FieldFrame label={label} hint={hint} error={error}>
      {(control) => <input {...control} {...input} />}
    </FieldFrame>
  );
}
