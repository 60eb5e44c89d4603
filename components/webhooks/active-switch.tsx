"use client";

import { cn } from "@/components/ui/cn";

/** An on/off switch (role="switch"); Space and Enter toggle it like any button. */
export function ActiveSwitch({ checked, onChange, label, pending = false }: { checked: boolean; onChange: (next: boolean) => void; label: string; pending?: boolean }) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={checked}
      aria-label={label}
      aria-busy={pending || undefined}
      disabled={pending}
      onClick={() => onChange(!checked)}
      className={cn(
        "relative inline-flex h-6 w-10 shrink-0 items-center rounded-full transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-focus disabled:opacity-60",
        checked ? "bg-accent" : "bg-line-strong",
      )}
    >
      <span aria-hidden="true" className={cn("inline-block size-4.5 rounded-full bg-white shadow transition-transform", checked ? "translate-x-5" : "translate-x-0.5")} />
    </button>
  );
}
