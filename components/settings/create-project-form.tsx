"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { api, errorMessage, fieldOf } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { createProjectSchema } from "@/lib/projects/schema";

export function CreateProjectForm() {
  const router = useRouter();
  const [serverError, setServerError] = useState<string | null>(null);
  const [navigating, setNavigating] = useState(false);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors, isSubmitting },
  } = useForm({ resolver: zodResolver(createProjectSchema), defaultValues: { name: "" } });

  const onSubmit = handleSubmit(async (values) => {
    setServerError(null);
    try {
      const { projectId } = await api<{ projectId: string }>("/api/projects", { method: "POST", body: values });
      setNavigating(true);
      router.push(`/projects/${projectId}`);
    } catch (e) {
      const field = fieldOf(e);
      if (field?.field === "name") setError("name", { message: field.message }, { shouldFocus: true });
      else setServerError(errorMessage(e));
    }
  });

  return (
    <Card id="new-project" aria-labelledby="new-project-title" className="scroll-mt-20">
      <CardHeader
        titleId="new-project-title"
        title="Create a new project"
        description="Each project has its own keys, usage and webhooks, and starts on the free plan with one API key."
      />
      <CardBody>
        <form onSubmit={onSubmit} noValidate className="space-y-4">
          {serverError ? <FormError>{serverError}</FormError> : null}
          <Field id="new-project-name" label="New project name" error={errors.name?.message}>
            <Input autoComplete="off" placeholder="e.g. Mainnet indexer" {...describedBy("new-project-name", errors.name?.message)} {...register("name")} />
          </Field>
          <Button type="submit" pending={isSubmitting || navigating}>
            Create project
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}
