"use client";

import { useEffect, useRef, useState } from "react";
import { Button, type ButtonSize, type ButtonVariant } from "./button";
import { copyText } from "./clipboard";
import { cn } from "./cn";

export interface CopyButtonProps {
  /** The text, or a function that fetches it (for example a key that must be revealed first). */
  value: string | (() => Promise<string>);
  /** Accessible name when "Copy" alone would be ambiguous on the page. */
  label?: string;
  variant?: ButtonVariant;
  size?: ButtonSize;
  className?: string;
  /** Hide the visible "Copy" text (icon only); the accessible name stays. */
  iconOnly?: boolean;
}

const CopyIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
    <rect x="5.25" y="5.25" width="8" height="8" rx="1.5" />
    <path d="M10.75 5.25v-1.5a1.5 1.5 0 0 0-1.5-1.5h-5a1.5 1.5 0 0 0-1.5 1.5v5a1.5 1.5 0 0 0 1.5 1.5h1.5" />
  </svg>
);

const CheckIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.8">
    <path d="m3.5 8.5 3 3 6-7" strokeLinecap="round" strokeLinejoin="round" />
  </svg>
);

/**
 * A "Copy" button. Its name never changes (tests and screen readers can rely on it); the
 * result ("Copied" or a failure) is announced in a polite live region beside it.
 */
export function CopyButton({ value, label, variant = "secondary", size = "sm", className, iconOnly = false }: CopyButtonProps) {
  const [state, setState] = useState<"idle" | "working" | "copied" | "failed">("idle");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  async function onClick() {
    clearTimeout(timer.current);
    setState("working");
    try {
      const text = typeof value === "string" ? value : await value();
      await copyText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    timer.current = setTimeout(() => setState("idle"), 2500);
  }

  return (
    <span className={cn("inline-flex items-center gap-2", className)}>
      <Button
        variant={variant}
        size={size}
        onClick={onClick}
        pending={state === "working"}
        icon={state === "copied" ? <CheckIcon /> : <CopyIcon />}
        aria-label={label}
        className={iconOnly ? "px-2" : undefined}
      >
        {iconOnly ? null : "Copy"}
      </Button>
      <span role="status" aria-live="polite" className="min-w-0 text-xs font-medium empty:hidden">
        {state === "copied" ? <span className="text-success-text">Copied</span> : null}
        {state === "failed" ? <span className="text-danger-text">Copy failed. Select the text and copy it manually.</span> : null}
      </span>
    </span>
  );
}
