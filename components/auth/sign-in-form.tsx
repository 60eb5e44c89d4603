"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { UNREACHABLE_MESSAGE } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { signInSchema } from "@/lib/auth/schema";
import { checkCredentialsAction } from "./actions";
import { AuthCard, EmailField, OrGitHub, textLink } from "./auth-card";

export function SignInForm({ github, initialError }: { github: boolean; initialError?: string }) {
  const router = useRouter();
  const [serverError, setServerError] = useState<string | undefined>(initialError);
  const [navigating, setNavigating] = useState(false);
  const {
    register,
    handleSubmit,
    formState: { errors, isSubmitting },
  } = useForm({ resolver: zodResolver(signInSchema), defaultValues: { email: "", password: "" }, mode: "onTouched" });

  const pending = isSubmitting || navigating;

  const onSubmit = handleSubmit(async ({ email, password }) => {
    setServerError(undefined);
    // A wrong password is reported here, so next-auth's signIn() below is only called with
    // credentials that work (it answers failures with HTTP 401, which the browser logs).
    const checked = await checkCredentialsAction({ email, password }).catch(() => null);
    if (!checked) {
      setServerError(UNREACHABLE_MESSAGE);
      return;
    }
    if (!checked.ok) {
      setServerError(checked.message);
      return;
    }
    let result: Awaited<ReturnType<typeof signIn>>;
    try {
      result = await signIn("credentials", { email, password, redirect: false });
    } catch {
      setServerError(UNREACHABLE_MESSAGE);
      return;
    }
    if (!result || result.error || !result.ok) {
      setServerError(result?.error && result.error !== "CredentialsSignin" ? result.error : "Wrong email or password.");
      return;
    }
    setNavigating(true);
    router.replace("/");
  });

  return (
    <AuthCard
      title="Sign in to Blockgate"
      description="Welcome back. Your endpoints are waiting."
      footer={
        <>
          New to Blockgate?{" "}
          <Link href="/sign-up" className={textLink}>
            Create an account
          </Link>
        </>
      }
    >
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        {serverError ? <FormError>{serverError}</FormError> : null}
        <EmailField error={errors.email?.message} {...register("email")} />
        <Field id="password" label="Password" error={errors.password?.message}>
          <Input type="password" autoComplete="current-password" {...describedBy("password", errors.password?.message)} {...register("password")} />
        </Field>
        <Button type="submit" className="w-full" pending={pending}>
          Sign in
        </Button>
      </form>
      {github ? <OrGitHub disabled={pending} /> : null}
    </AuthCard>
  );
}
