import type { ReactNode, SelectHTMLAttributes } from 'react';
import { FieldFrame } from './Field.tsx';

export interface SelectFieldProps extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> {
  label: string;
  /** The choices, in order: value and what the user reads. */
  options: readonly { value: string; label: string }[];
  hint?: ReactNode;
  /** The field's error (from fieldErrors(error)[name]): shown under it, announced, and the select marked invalid. */
  error?: string;
}

/** A labelled <select> with its hint and its error, wired for screen readers as Field is. */
export function SelectField({ label, options, hint, error, ...select }: SelectFieldProps) {
  return (
    <FieldFrame label={label} hint={hint} error={error}>
      {(control) => (
        <select {...control} {...select}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </FieldFrame>
  );
}
