"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { onlineManager, useQueryClient } from "@tanstack/react-query";
import { signOut } from "next-auth/react";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { ApiError, UNREACHABLE_MESSAGE } from "@/components/api-client";
import { FormError, FormSuccess, Notice } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { changePasswordSchema } from "@/lib/auth/schema";
import { changePasswordAction, signOutEverywhereAction } from "./actions";

const FIELDS = ["currentPassword", "newPassword", "confirmPassword"] as const;
const EMPTY = { currentPassword: "", newPassword: "", confirmPassword: "" };

function ChangePasswordForm({ email }: { email: string }) {
  const [serverError, setServerError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // Checked on submit (then as the fields change), not on blur: once the form is saved and emptied,
  // leaving a field must not call it missing.
  const {
    register,
    handleSubmit,
    setError,
    reset,
    formState: { errors, isSubmitting },
  } = useForm({ resolver: zodResolver(changePasswordSchema), defaultValues: EMPTY });

  const onSubmit = handleSubmit(async (values) => {
    setServerError(null);
    setSaved(null);
    const result = await changePasswordAction(values).catch(() => null);
    if (!result) return setServerError(UNREACHABLE_MESSAGE);
    if (!result.ok) {
      const field = FIELDS.find((f) => f === result.field);
      if (field) setError(field, { message: result.message }, { shouldFocus: true });
      else setServerError(result.message);
      return;
    }
    reset(EMPTY);
    setSaved("Password changed. Your other sessions are signed out; this one stays signed in.");
  });

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-4">
      {serverError ? <FormError>{serverError}</FormError> : null}
      {/* For password managers: whose password this is. */}
      <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
      <Field id="current-password" label="Current password" error={errors.currentPassword?.message}>
        <Input type="password" autoComplete="current-password" {...describedBy("current-password", errors.currentPassword?.message)} {...register("currentPassword")} />
      </Field>
      <Field id="new-password" label="New password" hint="At least 10 characters." error={errors.newPassword?.message}>
        <Input type="password" autoComplete="new-password" {...describedBy("new-password", errors.newPassword?.message, true)} {...register("newPassword", { onChange: () => setSaved(null) })} />
      </Field>
      <Field id="confirm-password" label="Confirm new password" error={errors.confirmPassword?.message}>
        <Input type="password" autoComplete="new-password" {...describedBy("confirm-password", errors.confirmPassword?.message)} {...register("confirmPassword")} />
      </Field>
      <div className="flex flex-wrap items-center gap-3">
        <Button type="submit" pending={isSubmitting}>
          Change password
        </Button>
        <FormSuccess>{saved}</FormSuccess>
      </div>
    </form>
  );
}

function SignOutEverywhere() {
  const [open, setOpen] = useState(false);
  const queryClient = useQueryClient();
  return (
    <>
      <Button variant="secondary" onClick={() => setOpen(true)}>
        Sign out everywhere
      </Button>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        title="Sign out everywhere?"
        description="Every session of your account ends now, on every device and browser, this one included. You will need to sign in again."
        confirmLabel="Sign out everywhere"
        action={async () => {
          // The page's background reads (the allowance banner, the CU sparkline) stop first: one
          // sent after the sessions end would be refused with 401 on the way to sign-in.
          onlineManager.setOnline(false);
          await queryClient.cancelQueries();
          const result = await signOutEverywhereAction();
          if (!result.ok) {
            onlineManager.setOnline(true);
            // A server action answers its failures with HTTP 200.
            throw new ApiError(200, result.code, result.message);
          }
        }}
        // next-auth clears this browser's cookie and goes to sign-in.
        onDone={() => signOut({ callbackUrl: "/sign-in" })}
      />
    </>
  );
}

/** The Settings page's Account section: the signed-in user's password and sessions. */
export function AccountSection({ email, hasPassword }: { email: string; hasPassword: boolean }) {
  return (
    <section id="account" aria-labelledby="account-title" className="scroll-mt-20 space-y-4">
      <div className="space-y-1">
        <h2 id="account-title" className="text-lg font-semibold text-fg">
          Account
        </h2>
        <p className="text-sm text-muted">
          Signed in as <span className="font-medium text-fg">{email}</span>. These settings apply to all your projects.
        </p>
      </div>
      <Card aria-labelledby="password-title">
        <CardHeader titleId="password-title" as="h3" title="Change password" description="Signs out every other session of your account." />
        <CardBody>
          {hasPassword ? (
            <ChangePasswordForm email={email} />
          ) : (
            <Notice>You sign in with GitHub: your account has no password here.</Notice>
          )}
        </CardBody>
      </Card>
      <Card aria-labelledby="sessions-title">
        <CardHeader
          titleId="sessions-title"
          as="h3"
          title="Sessions"
          description="Signed in on a device you no longer use, or one that is not yours? End every session of your account, this one included."
          actions={<SignOutEverywhere />}
        />
      </Card>
    </section>
  );
}
