"use client";

import { Logo } from "@/components/brand/logo";
import { ErrorView } from "@/components/ui/error-view";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="flex min-h-dvh flex-col items-center justify-center px-6 py-16">
      <Logo className="mb-10" />
      <ErrorView error={error} reset={reset} />
    </main>
  );
}
