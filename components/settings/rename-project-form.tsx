"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { api, errorMessage, fieldOf } from "@/components/api-client";
import { FormError, FormSuccess } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { renameProjectSchema } from "@/lib/projects/schema";

export function RenameProjectForm({ projectId, name }: { projectId: string; name: string }) {
  const router = useRouter();
  const [serverError, setServerError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const {
    register,
    handleSubmit,
    setError,
    reset,
    formState: { errors, isSubmitting, isDirty },
  } = useForm({ resolver: zodResolver(renameProjectSchema), defaultValues: { name } });

  const onSubmit = handleSubmit(async (values) => {
    setServerError(null);
    setSaved(null);
    try {
      await api(`/api/projects/${encodeURIComponent(projectId)}`, { method: "PATCH", body: values });
      reset({ name: values.name });
      setSaved(`Project renamed to “${values.name}”.`);
      // The sidebar and page header are server-rendered: refresh them.
      router.refresh();
    } catch (e) {
      const field = fieldOf(e);
      if (field?.field === "name") setError("name", { message: field.message }, { shouldFocus: true });
      else setServerError(errorMessage(e));
    }
  });

  return (
    <Card aria-labelledby="rename-title">
      <CardHeader titleId="rename-title" title="Rename project" description="The name is shown in the console only; endpoints and keys do not change." />
      <CardBody>
        <form onSubmit={onSubmit} noValidate className="space-y-4">
          {serverError ? <FormError>{serverError}</FormError> : null}
          <Field id="project-name" label="Project name" error={errors.name?.message}>
            <Input autoComplete="off" {...describedBy("project-name", errors.name?.message)} {...register("name", { onChange: () => setSaved(null) })} />
          </Field>
          <div className="flex flex-wrap items-center gap-3">
            <Button type="submit" pending={isSubmitting} disabled={!isDirty && !isSubmitting}>
              Save
            </Button>
            <FormSuccess>{saved}</FormSuccess>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
