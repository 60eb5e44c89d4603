"use client";

import type { UseQueryResult } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Skeleton } from "@/components/ui/skeleton";

export interface ExamplesFrameProps<T> {
  /** Prefix of the element ids, unique on the page. */
  idPrefix: string;
  title: string;
  refreshLabel: string;
  examples: UseQueryResult<T>;
  /** What the loading state is called for a screen reader, and a sentence under it if any. */
  loading: { label: string; note?: string };
  /** Said before the error's own message when the values cannot be loaded. */
  errorLead: string;
  children: (data: T) => ReactNode;
}

/** The values a tab reads from the chain to fill its form: a title, Refresh, loading and error states. */
export function ExamplesFrame<T>({ idPrefix, title, refreshLabel, examples, loading, errorLead, children }: ExamplesFrameProps<T>) {
  const [manual, setManual] = useState(false);
  return (
    <section aria-labelledby={`${idPrefix}-examples-title`} className="space-y-2 rounded-md border border-line bg-subtle/60 px-4 py-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 id={`${idPrefix}-examples-title`} className="text-sm font-semibold text-fg">
          {title}
        </h3>
        <Button
          variant="ghost"
          size="sm"
          pending={manual}
          onClick={() => {
            setManual(true);
            void examples.refetch().finally(() => setManual(false));
          }}
        >
          {refreshLabel}
        </Button>
      </div>
      {examples.isPending ? (
        <div role="status" aria-label={loading.label} className="space-y-2">
          <Skeleton className="h-4 w-64 max-w-full" />
          <Skeleton className="h-4 w-96 max-w-full" />
          {loading.note ? <p className="text-xs text-muted">{loading.note}</p> : null}
        </div>
      ) : examples.isError ? (
        <FormError>
          {errorLead} {errorMessage(examples.error)}
        </FormError>
      ) : (
        children(examples.data)
      )}
    </section>
  );
}
