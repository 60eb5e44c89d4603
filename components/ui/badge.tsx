import type { ComponentProps } from "react";
import { cn } from "./cn";

export type BadgeTone = "neutral" | "accent" | "success" | "warn" | "danger";

const tones: Record<BadgeTone, string> = {
  neutral: "bg-subtle text-muted ring-line-strong",
  accent: "bg-accent-soft text-accent-text ring-accent/25",
  success: "bg-success-soft text-success-text ring-success-text/25",
  warn: "bg-warn-soft text-warn-text ring-warn-text/25",
  danger: "bg-danger-soft text-danger-text ring-danger-text/25",
};

export function Badge({ tone = "neutral", className, ...rest }: ComponentProps<"span"> & { tone?: BadgeTone }) {
  return (
    <span
      className={cn("inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset", tones[tone], className)}
      {...rest}
    />
  );
}
