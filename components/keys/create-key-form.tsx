"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { describedBy, Field } from "@/components/ui/field";
import { Input } from "@/components/ui/input";
import { createKeySchema } from "./types";
import { KeyActionError, useCreateKey } from "./use-key-actions";

export function CreateKeyForm({ projectId }: { projectId: string }) {
  const [created, setCreated] = useState<{ name: string; apiKey: string } | null>(null);
  const {
    register,
    handleSubmit,
    reset: resetForm,
    setError,
    formState: { errors },
  } = useForm({ resolver: zodResolver(createKeySchema), defaultValues: { name: "" } });

  const create = useCreateKey(projectId);

  const onSubmit = handleSubmit(({ name }) => {
    setCreated(null);
    create.mutate(name, {
      onSuccess: (res) => {
        setCreated({ name, apiKey: res.apiKey });
        resetForm();
      },
      onError: (e) => {
        if (nameError(e)) setError("name", { message: e.message }, { shouldFocus: true });
      },
    });
  });
  const serverError = create.isError && !nameError(create.error) ? create.error.message : null;

  return (
    <Card aria-labelledby="create-key-title">
      <CardHeader titleId="create-key-title" title="Create key" description="Use separate keys per application, so you can reset one without touching the others." />
      <CardBody className="space-y-4">
        <form onSubmit={onSubmit} noValidate className="flex flex-col gap-3 sm:flex-row sm:items-start">
          <div className="flex-1">
            <Field id="new-key-name" label="Key name" error={errors.name?.message}>
              <Input placeholder="e.g. Backend" autoComplete="off" {...describedBy("new-key-name", errors.name?.message)} {...register("name")} />
            </Field>
          </div>
          <Button type="submit" pending={create.isPending} className="sm:mt-[1.625rem]">
            Create key
          </Button>
        </form>
        {serverError ? <FormError>{serverError}</FormError> : null}
        {created ? (
          <div className="space-y-2 rounded-md border border-success-text/25 bg-success-soft p-4" role="status">
            <p className="text-sm font-medium text-success-text">Key “{created.name}” created. Copy it now; you can reveal it again later.</p>
            <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
              <code data-testid="created-api-key-value" className="min-w-0 flex-1 rounded-md border border-line bg-surface px-3 py-2 font-mono text-[13px] break-all text-fg">
                {created.apiKey}
              </code>
              <CopyButton value={created.apiKey} label="Copy new key" />
            </div>
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}

/** A refusal that names the name field: shown under it rather than above the form. */
const nameError = (e: unknown) => e instanceof KeyActionError && e.field === "name";
