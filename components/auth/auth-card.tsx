import type { ReactNode } from "react";

export function AuthCard({ title, description, children, footer }: { title: ReactNode; description?: ReactNode; children: ReactNode; footer?: ReactNode }) {
  return (
    <div>
      <div className="mb-6 space-y-1.5 text-center">
        <h1 className="text-2xl font-semibold tracking-tight text-fg">{title}</h1>
        {description ? <p className="text-sm text-muted">{description}</p> : null}
      </div>
      <div className="rounded-lg border border-line bg-surface p-6 shadow-sm">{children}</div>
      {footer ? <p className="mt-6 text-center text-sm text-muted">{footer}</p> : null}
    </div>
  );
}

export function Divider({ children }: { children: ReactNode }) {
  return (
    <div className="my-5 flex items-center gap-3 text-xs text-muted" role="separator" aria-label={typeof children === "string" ? children : undefined}>
      <span className="h-px flex-1 bg-line" />
      <span aria-hidden="true">{children}</span>
      <span className="h-px flex-1 bg-line" />
    </div>
  );
}

export const textLink = "font-medium text-accent-text underline-offset-4 hover:underline";
