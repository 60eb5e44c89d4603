"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { signIn } from "next-auth/react";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { useForm } from "react-hook-form";
import { api, UNREACHABLE_MESSAGE } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { solveChallenge } from "@/lib/auth/proof-of-work";
import { signUpSchema } from "@/lib/auth/schema";
import { signUpAction } from "./actions";
import { AuthCard, EmailField, OrGitHub, textLink } from "./auth-card";

export function SignUpForm({ github }: { github: boolean }) {
  const router = useRouter();
  const [serverError, setServerError] = useState<{ message: string; exists?: boolean } | undefined>();
  const [navigating, setNavigating] = useState(false);
  const [checking, setChecking] = useState(false);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors, isSubmitting },
  } = useForm({ resolver: zodResolver(signUpSchema), defaultValues: { email: "", password: "" }, mode: "onTouched" });

  const pending = isSubmitting || navigating;

  // A proof of work still being solved stops when the page goes away (and sends nothing).
  const solving = useRef<AbortController | null>(null);
  useEffect(() => () => solving.current?.abort(), []);

  /** The proof the server asks for now (undefined: none), solved in slices while the form says why it waits. */
  async function proofOfWork(): Promise<{ challenge: string; nonce: string } | undefined> {
    const { challenge, difficulty } = await api<{ challenge: string | null; difficulty: number }>("/api/sign-up/challenge");
    if (!challenge || difficulty === 0) return undefined;
    solving.current = new AbortController();
    setChecking(true);
    try {
      return { challenge, nonce: await solveChallenge(challenge, difficulty, solving.current.signal) };
    } finally {
      setChecking(false);
    }
  }

  async function createAccount(values: { email: string; password: string }) {
    // Twice at most: a sign-up sent without a proof (or with one gone stale) just as many others
    // arrive is asked for a fresh one.
    for (let attempt = 1; ; attempt++) {
      const result = await signUpAction({ ...values, proof: await proofOfWork() });
      if (result.ok || result.field !== "proof" || attempt === 2) return result;
    }
  }

  async function submit({ email, password }: { email: string; password: string }) {
    setServerError(undefined);
    const created = await createAccount({ email, password }).catch(() => null);
    if (!created) {
      setServerError({ message: UNREACHABLE_MESSAGE });
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
  }

  // handleSubmit is called from the event: the submit path reads a ref, which render must not.
  const onSubmit = (e: FormEvent<HTMLFormElement>) => void handleSubmit(submit)(e);

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
        <EmailField error={errors.email?.message} {...register("email")} />
        <Field id="password" label="Password" hint="At least 10 characters." error={errors.password?.message}>
          <Input type="password" autoComplete="new-password" {...describedBy("password", errors.password?.message, true)} {...register("password")} />
        </Field>
        <Button type="submit" className="w-full" pending={pending}>
          Sign up
        </Button>
        <p role="status" className="text-center text-sm text-muted">
          {checking ? "Checking your browser… (a second or two)" : null}
        </p>
      </form>
      {github ? <OrGitHub disabled={pending} /> : null}
    </AuthCard>
  );
}
