"use client";

import { useEffect } from "react";
import { Button, ButtonLink } from "./button";

/** The body of an error boundary: a calm message, a retry and a way home. */
export function ErrorView({ error, reset, compact = false }: { error: Error & { digest?: string }; reset: () => void; compact?: boolean }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  return (
    <div className={compact ? "rounded-lg border border-line bg-surface px-6 py-12 text-center" : "text-center"}>
      <h1 className="text-2xl font-semibold tracking-tight">Something went wrong</h1>
      <p className="mx-auto mt-3 max-w-sm text-sm text-muted">
        This page could not load. It is probably temporary: try again, or come back in a moment.
      </p>
      {error.digest ? <p className="mt-2 font-mono text-xs text-muted">Reference: {error.digest}</p> : null}
      <div className="mt-8 flex justify-center gap-3">
        <Button onClick={reset}>Try again</Button>
        <ButtonLink href="/" variant="secondary">
          Go to the console
        </ButtonLink>
      </div>
    </div>
  );
}
