"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent } from "react";
import { useForm } from "react-hook-form";
import { api, errorMessage, fieldOf } from "@/components/api-client";
import { AuthCard } from "@/components/auth/auth-card";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { describedBy, Field } from "@/components/ui/field";
import { Input, Select } from "@/components/ui/input";
import { onboardingSchema, USE_CASES } from "@/lib/projects/schema";

type Fields = "name" | "organization" | "useCase";

export function OnboardingForm({ email, defaultName }: { email: string; defaultName: string }) {
  const router = useRouter();
  const [serverError, setServerError] = useState<string | undefined>();
  const [navigating, setNavigating] = useState(false);
  const inFlight = useRef(false);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors, isSubmitting },
  } = useForm({
    resolver: zodResolver(onboardingSchema),
    defaultValues: { name: defaultName, organization: "", useCase: "" },
    mode: "onTouched",
  });
  const pending = isSubmitting || navigating;

  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    // A second click between the first click and the re-render must not send again.
    if (inFlight.current) {
      e.preventDefault();
      return;
    }
    void handleSubmit(async (values) => {
      inFlight.current = true;
      setServerError(undefined);
      try {
        const { projectId } = await api<{ projectId: string; created: boolean }>("/api/onboarding", { method: "POST", body: values });
        setNavigating(true);
        router.replace(`/projects/${projectId}`);
      } catch (err) {
        inFlight.current = false;
        const field = fieldOf(err);
        if (field && ["name", "organization", "useCase"].includes(field.field)) {
          setError(field.field as Fields, { message: field.message }, { shouldFocus: true });
        } else {
          setServerError(errorMessage(err));
        }
      }
    })(e);
  };

  return (
    <AuthCard title="Welcome to Blockgate" description={<>Signed in as {email}. Tell us a little about you; we will create your first project and its API key.</>}>
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        {serverError ? <FormError>{serverError}</FormError> : null}
        <Field id="name" label="Your name" error={errors.name?.message}>
          <Input autoComplete="name" {...describedBy("name", errors.name?.message)} {...register("name")} />
        </Field>
        <Field id="organization" label="Organisation (optional)" error={errors.organization?.message}>
          <Input autoComplete="organization" {...describedBy("organization", errors.organization?.message)} {...register("organization")} />
        </Field>
        <Field id="useCase" label="What are you building?" error={errors.useCase?.message}>
          <Select {...describedBy("useCase", errors.useCase?.message)} {...register("useCase")}>
            <option value="" disabled>
              Choose one…
            </option>
            {USE_CASES.map((u) => (
              <option key={u.value} value={u.value}>
                {u.label}
              </option>
            ))}
          </Select>
        </Field>
        <Button type="submit" className="w-full" pending={pending}>
          Continue
        </Button>
      </form>
    </AuthCard>
  );
}
