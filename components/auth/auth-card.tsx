import type { ReactNode } from "react";
import type { UseFormRegisterReturn } from "react-hook-form";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { GitHubButton } from "./github-button";

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

/** The email field of the sign-in and sign-up forms, registered with react-hook-form. */
export function EmailField({ error, ...registered }: { error?: string } & UseFormRegisterReturn<"email">) {
  return (
    <Field id="email" label="Email" error={error}>
      <Input type="email" autoComplete="email" inputMode="email" autoCapitalize="none" spellCheck={false} {...describedBy("email", error)} {...registered} />
    </Field>
  );
}

/** The other way in, below the sign-in and sign-up forms when GitHub sign-in is configured. */
export function OrGitHub({ disabled }: { disabled: boolean }) {
  return (
    <>
      <Divider>or</Divider>
      <GitHubButton disabled={disabled} />
    </>
  );
}

export const textLink = "font-medium text-accent-text underline-offset-4 hover:underline";
