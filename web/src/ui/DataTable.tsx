import type { ReactNode } from 'react';
import { LoadingRows } from './Loading.tsx';

export interface Column<T> {
  /** The column's heading (also the label each cell shows on a phone, where rows become cards). */
  header: string;
  cell(row: T): ReactNode;
  /** Right-aligned figures. */
  numeric?: boolean;
}

export interface DataTableProps<T> {
  /** Names the table for screen readers. */
  caption: string;
  columns: readonly Column<T>[];
  /** undefined while loading: skeleton rows keep the layout still. */
  rows: readonly T[] | undefined;
  rowKey(row: T): string;
  /** Shown instead of the table when rows is empty. */
  empty?: ReactNode;
}

/** A table that reads as cards on a phone (each cell labelled by its column). */
export function DataTable<T>({ caption, columns, rows, rowKey, empty }: DataTableProps<T>) {
  if (rows === undefined) return <LoadingRows columns={columns.length} label={`Loading ${caption.toLowerCase()}`} />;
  if (rows.length === 0 && empty) return <>{empty}</>;
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={c.numeric ? 'numeric' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header} data-label={c.header} className={c.numeric ? 'numeric' : undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
