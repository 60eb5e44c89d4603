import type { ReactNode } from "react";
import { cn } from "./cn";

/** A server or request error for a whole form, announced at once (role="alert"). */
export function FormError({ children, className }: { children: ReactNode; className?: string }) {
  if (!children) return null;
  return (
    <div
      role="alert"
      data-testid="form-error"
      className={cn("flex items-start gap-2 rounded-md border border-danger/30 bg-danger-soft px-3 py-2.5 text-sm text-danger-text", className)}
    >
      <svg aria-hidden="true" viewBox="0 0 16 16" className="mt-0.5 size-4 shrink-0" fill="currentColor">
        <path d="M8 1.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM7.25 4.75a.75.75 0 0 1 1.5 0v3.5a.75.75 0 0 1-1.5 0v-3.5ZM8 11.75a.9.9 0 1 1 0-1.8.9.9 0 0 1 0 1.8Z" />
      </svg>
      <div className="min-w-0">{children}</div>
    </div>
  );
}

/** A success message, announced politely. */
export function FormSuccess({ children, className }: { children: ReactNode; className?: string }) {
  return (
    <div role="status" className={cn("text-sm", className)}>
      {children ? (
        <p className="flex items-center gap-2 rounded-md border border-success-text/25 bg-success-soft px-3 py-2.5 text-success-text">
          <svg aria-hidden="true" viewBox="0 0 16 16" className="size-4 shrink-0" fill="none" stroke="currentColor" strokeWidth="1.8">
            <path d="m3.5 8.5 3 3 6-7" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
          {children}
        </p>
      ) : null}
    </div>
  );
}

export function Notice({ children, className }: { children: ReactNode; className?: string }) {
  return <div className={cn("rounded-md border border-line bg-subtle px-3 py-2.5 text-sm text-muted", className)}>{children}</div>;
}
