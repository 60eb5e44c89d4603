"use client";

// The stylesheet every page already loads: a separate one for this page would be preloaded on
// every page and, unused there, make the browser warn.
import "./globals.css";

/**
 * Last resort when the root layout itself fails: no providers can be assumed, so the page brings
 * its stylesheet itself. Styles come from classes, not style attributes, which the
 * Content-Security-Policy refuses.
 */
export default function GlobalError({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body className="m-0 grid min-h-screen place-items-center bg-canvas font-sans text-fg">
        <main className="p-6 text-center">
          <h1 className="text-2xl font-semibold">Something went wrong</h1>
          <p className="mt-2 text-muted">Blockgate could not load. Please try again.</p>
          <button type="button" onClick={reset} className="mt-4 rounded-md border border-line-strong px-4 py-2 hover:bg-subtle">
            Try again
          </button>
        </main>
      </body>
    </html>
  );
}
