"use client";

import { useSyncExternalStore } from "react";
import { cn } from "@/components/ui/cn";
import type { Theme } from "./theme";
import { currentTheme, setTheme, subscribeTheme } from "./theme-sync";

const serverSnapshot = (): Theme | null => null;

/** A switch between light and dark; the choice is stored and applied before paint on the next load. */
export function ThemeToggle({ className, showLabel = false }: { className?: string; showLabel?: boolean }) {
  const theme = useSyncExternalStore(subscribeTheme, currentTheme, serverSnapshot);
  const dark = theme === "dark";
  return (
    <button
      type="button"
      aria-pressed={theme === null ? undefined : dark}
      aria-label={showLabel ? undefined : "Dark theme"}
      title={dark ? "Switch to the light theme" : "Switch to the dark theme"}
      onClick={() => setTheme(dark ? "light" : "dark")}
      className={cn(
        "inline-flex h-9 items-center gap-2 rounded-md px-2.5 text-sm text-muted transition-colors hover:bg-subtle hover:text-fg",
        className,
      )}
    >
      {/* Both icons render on the server; CSS picks one so there is no flash before hydration. */}
      <svg aria-hidden="true" viewBox="0 0 20 20" className="size-4 dark:hidden" fill="none" stroke="currentColor" strokeWidth="1.6">
        <path d="M16.5 11.8A6.8 6.8 0 0 1 8.2 3.5a6.8 6.8 0 1 0 8.3 8.3Z" strokeLinejoin="round" />
      </svg>
      <svg aria-hidden="true" viewBox="0 0 20 20" className="hidden size-4 dark:block" fill="none" stroke="currentColor" strokeWidth="1.6">
        <circle cx="10" cy="10" r="3.4" />
        <path d="M10 1.8v2M10 16.2v2M1.8 10h2M16.2 10h2M4.2 4.2l1.4 1.4M14.4 14.4l1.4 1.4M4.2 15.8l1.4-1.4M14.4 5.6l1.4-1.4" strokeLinecap="round" />
      </svg>
      {showLabel ? <span>Dark theme</span> : null}
    </button>
  );
}
