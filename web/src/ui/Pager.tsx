import { useState } from 'react';

/** A list's page as the API answers it: `pagination` of the reference API's lists. */
interface Pagination { hasMore: boolean; nextCursor: string | null }

export interface CursorPages {
  /** The cursor of the page shown (undefined: the first). */
  cursor: string | undefined;
  previous(): void;
  next(cursor: string): void;
}

/**
 * The cursors a cursor-paged list has walked, so Previous can go back. They start again whenever `query` (the
 * list's filters, as one string) changes: a cursor belongs to the query that issued it.
 */
export function useCursorPages(query = ''): CursorPages {
  const [pages, setPages] = useState<{ query: string; cursors: string[] }>({ query, cursors: [] });
  const cursors = pages.query === query ? pages.cursors : [];
  return {
    cursor: cursors.at(-1),
    previous: () => setPages({ query, cursors: cursors.slice(0, -1) }),
    next: (cursor) => setPages({ query, cursors: [...cursors, cursor] }),
  };
}

/** Previous and Next under a cursor-paged list; nothing when the list has one page. Next waits while a page loads. */
export function Pager({ pages, pagination, loading = false, label }: { pages: CursorPages; pagination: Pagination | undefined; loading?: boolean; label: string }) {
  if (!pages.cursor && !pagination?.hasMore) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="button" disabled={!pages.cursor} onClick={pages.previous}>Previous page</button>
      <button type="button" className="button" disabled={!pagination?.hasMore || !pagination.nextCursor || loading} onClick={() => pages.next(pagination!.nextCursor!)}>Next page</button>
    </nav>
  );
}
