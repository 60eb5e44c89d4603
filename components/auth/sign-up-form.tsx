"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { signUpSchema } from "@/lib/auth/schema";
import { signUpAction } from "./actions";
import { AuthCard, Divider, textLink } from "./auth-card";
import { GitHubButton } from "./github-button";

export function SignUpForm({ github }: { github: boolean }) {
  const router = useRouter();
  const [serverError, setServerError] = useState<{ message: string; exists?: boolean } | undefined>();
  const [navigating, setNavigating] = useState(false);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors, isSubmitting },
  } = useForm({ resolver: zodResolver(signUpSchema), defaultValues: { email: "", password: "" }, mode: "onTouched" });

  const pending = isSubmitting || navigating;

  const onSubmit = handleSubmit(async ({ email, password }) => {
    setServerError(undefined);
    const created = await signUpAction({ email, password }).catch(() => null);
    if (!created) {
      setServerError({ message: "Could not reach the server. Check your connection and try again." });
      return;
    }
    if (!created.ok) {
      if (created.field === "email" || created.field === "password") {
        setError(created.field, { message: created.message }, { shouldFocus: true });
      } else {
        setServerError({ message: created.message, exists: created.code === "RESOURCE_ALREADY_EXISTS" });
      }
      return;
    }
    // The account exists now: sign in with the same credentials and continue to onboarding.
    const result = await signIn("credentials", { email, password, redirect: false }).catch(() => undefined);
    if (!result || result.error || !result.ok) {
      setServerError({ message: "Your account was created, but signing in failed. Please sign in.", exists: true });
      return;
    }
    setNavigating(true);
    router.replace("/onboarding");
  });

  return (
    <AuthCard
      title="Create your account"
      description="Free to start. One API key, every network."
      footer={
        <>
          Already have an account?{" "}
          <Link href="/sign-in" className={textLink}>
            Sign in
          </Link>
        </>
      }
    >
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        {serverError ? (
          <FormError>
            {serverError.message}
            {serverError.exists ? (
              <>
                {" "}
                <Link href="/sign-in" className="font-medium underline underline-offset-4">
                  Go to sign in
                </Link>
              </>
            ) : null}
          </FormError>
        ) : null}
        <Field id="email" label="Email" error={errors.email?.message}>
          <Input type="email" autoComplete="email" inputMode="email" autoCapitalize="none" spellCheck={false} {...describedBy("email", errors.email?.message)} {...register("email")} />
        </Field>
        <Field id="password" label="Password" hint="At least 10 characters." error={errors.password?.message}>
          <Input type="password" autoComplete="new-password" {...describedBy("password", errors.password?.message, true)} {...register("password")} />
        </Field>
        <Button type="submit" className="w-full" pending={pending}>
          Sign up
        </Button>
      </form>
      {github ? (
        <>
          <Divider>or</Divider>
          <GitHubButton disabled={pending} />
        </>
      ) : null}
    </AuthCard>
  );
}
