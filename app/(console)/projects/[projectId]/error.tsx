"use client";

import { ErrorView } from "@/components/ui/error-view";

/** Errors in a console page keep the sidebar; the layout's own errors reach app/error.tsx. */
export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorView error={error} reset={reset} compact />;
}
