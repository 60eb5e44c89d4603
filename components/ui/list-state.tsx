"use client";

import type { ReactNode } from "react";
import { errorMessage } from "@/components/api-client";
import { FormError } from "./alert";
import { Button, type ButtonSize } from "./button";
import { cn } from "./cn";
import { Skeleton } from "./skeleton";

/** What the list states read from a query (TanStack Query's result has all of it). */
export interface ListQuery {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  isFetching: boolean;
  refetch: () => unknown;
}

/** Why the list did not load (or, `stale`, did not refresh: the previous items stay shown), announced at once, with a retry. */
export function LoadError({ query, noun, size = "sm", className, stale = false }: { query: ListQuery; noun: string; size?: ButtonSize; className?: string; stale?: boolean }) {
  return (
    <div className={cn("space-y-3", className)}>
      <FormError>
        {stale ? `The last refresh failed; showing the previous ${noun}.` : `Could not load the ${noun}.`} {errorMessage(query.error)}
      </FormError>
      <Button variant="secondary" size={size} onClick={() => void query.refetch()} pending={query.isFetching}>
        Try again
      </Button>
    </div>
  );
}

/**
 * A list that is not a table: placeholders while it loads (announced as "Loading <noun>"), the error
 * with a retry, a message when it is empty, else the items.
 */
export function ListState({
  query,
  noun,
  items,
  loading,
  empty,
  children,
}: {
  query: ListQuery;
  noun: string;
  items: readonly unknown[] | undefined;
  /** The placeholders shown while loading. */
  loading: ReactNode;
  empty: ReactNode;
  children: ReactNode;
}) {
  return (
    <>
      {query.isPending ? (
        <div role="status" aria-busy="true" aria-label={`Loading ${noun}`}>
          {loading}
        </div>
      ) : null}
      {query.isError ? <LoadError query={query} noun={noun} /> : null}
      {items?.length === 0 ? <p className="text-sm text-muted">{empty}</p> : null}
      {items && items.length > 0 ? children : null}
    </>
  );
}

/**
 * A table inside a card: its header, placeholder rows while the first page loads, the rows
 * (`children`, one or more <tbody>), a message row when empty, and the error with a retry under it.
 */
export function ListTable({
  query,
  noun,
  caption,
  columns,
  actionsLabel,
  className,
  items,
  empty,
  emptyAction,
  loadingRows = 2,
  children,
}: {
  query: ListQuery;
  /** Plural, as in "Loading keys…" and "Could not load the keys.". */
  noun: string;
  /** What the table holds, for screen readers. */
  caption?: string;
  columns: readonly string[];
  /** The name of a last, right-aligned column of row actions (read by screen readers only). */
  actionsLabel?: string;
  /** The table's minimum width, e.g. min-w-[40rem]. */
  className?: string;
  items: readonly unknown[] | undefined;
  /** Shown in the table when the loaded list is empty; without it, nothing is. */
  empty?: ReactNode;
  emptyAction?: ReactNode;
  loadingRows?: number;
  children: ReactNode;
}) {
  const span = columns.length + (actionsLabel ? 1 : 0);
  const edge = (i: number) => (i === 0 || i === span - 1 ? "px-5" : "px-3");
  return (
    <>
      <div className="overflow-x-auto">
        <table className={cn("w-full text-left text-sm", className)}>
          {caption ? <caption className="sr-only">{caption}</caption> : null}
          <thead className="border-b border-line bg-subtle/60 text-xs font-medium whitespace-nowrap text-muted">
            <tr>
              {columns.map((label, i) => (
                <th key={label} scope="col" className={cn(edge(i), "py-2.5 font-medium")}>
                  {label}
                </th>
              ))}
              {actionsLabel ? (
                <th scope="col" className="px-5 py-2.5 text-right font-medium">
                  <span className="sr-only">{actionsLabel}</span>
                </th>
              ) : null}
            </tr>
          </thead>
          {query.isPending ? (
            <tbody aria-busy="true">
              {Array.from({ length: loadingRows }, (_, row) => (
                <tr key={row} className="border-t border-line first:border-t-0">
                  {Array.from({ length: span }, (_, i) =>
                    i === 0 ? (
                      <td key={i} className="space-y-2 px-5 py-4">
                        <Skeleton className="h-4 w-40" />
                        <Skeleton className="h-3 w-24" />
                      </td>
                    ) : (
                      <td key={i} className={cn(edge(i), "py-4")}>
                        {actionsLabel && i === span - 1 ? <Skeleton className="ml-auto h-8 w-32" /> : <Skeleton className="h-4 w-24" />}
                      </td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          ) : null}
          {children}
          {empty && items?.length === 0 ? (
            <tbody>
              <tr>
                <td colSpan={span} className="px-5 py-8 text-center text-sm text-muted">
                  {empty}
                  {emptyAction ? <div className="mt-3">{emptyAction}</div> : null}
                </td>
              </tr>
            </tbody>
          ) : null}
        </table>
      </div>
      {query.isPending ? (
        <span className="sr-only" role="status">
          Loading {noun}…
        </span>
      ) : null}
      {query.isError ? <LoadError query={query} noun={noun} className="px-5 py-4" stale={items !== undefined} /> : null}
    </>
  );
}

/** Page links under a paged list; nothing when it fits on one page. */
export function Pager({ label, page, pages, onPage, previous = "Previous", next = "Next" }: { label: string; page: number; pages: number; onPage: (page: number) => void; previous?: string; next?: string }) {
  if (pages <= 1) return null;
  return (
    <nav aria-label={label} className="flex items-center justify-between gap-3 border-t border-line px-5 py-3 text-sm text-muted">
      <span>
        Page {page} of {pages}
      </span>
      <div className="flex gap-2">
        <Button variant="secondary" size="sm" disabled={page <= 1} onClick={() => onPage(page - 1)}>
          {previous}
        </Button>
        <Button variant="secondary" size="sm" disabled={page >= pages} onClick={() => onPage(page + 1)}>
          {next}
        </Button>
      </div>
    </nav>
  );
}
