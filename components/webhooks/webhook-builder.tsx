"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm, useWatch, type UseFormReturn } from "react-hook-form";
import { api, errorMessage } from "@/components/api-client";
import { FormError, FormSuccess, Notice } from "@/components/ui/alert";
import { Button, ButtonLink } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { describedBy, Field } from "@/components/ui/field";
import { Input, Select } from "@/components/ui/input";
import { DESCRIPTION_MAX, EVENT_TYPES, type CreateWebhookBody } from "@/lib/webhooks/schema";
import type { WebhookRecord } from "@/lib/webhooks/record";
import { ConditionFields, InstantField } from "./condition-fields";
import { createResolver, EMPTY_CONDITION, serverFieldError, type WebhookFormValues } from "./form";
import { EVENT_TYPE_INFO, networksFor, webhookPage, webhooksPath, webhooksQueryKey, WEBHOOK_NETWORKS, type EventType } from "./types";
import { useCreateInbox, useSendTest } from "./use-webhook-actions";
import { VerificationSnippet } from "./verification-snippet";

const DEFAULTS: WebhookFormValues = {
  eventType: "LOG",
  network: networksFor("LOG")[0]!.slug,
  description: "",
  notification: { webhookUrl: "" },
  isInstant: false,
  isActive: true,
  condition: EMPTY_CONDITION,
};

/**
 * `privateUrls`: what lets webhook URLs reach private and loopback addresses on this server (said
 * near the URL field), absent when they are refused.
 */
export function WebhookBuilder({ projectId, privateUrls }: { projectId: string; privateUrls?: "local default" | "WEBHOOK_ALLOW_PRIVATE_URLS" }) {
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<WebhookRecord | null>(null);
  const form = useForm<WebhookFormValues, unknown, CreateWebhookBody>({
    resolver: createResolver,
    defaultValues: DEFAULTS,
  });
  const { register, handleSubmit, setValue, setError, formState } = form;
  const eventType = useWatch({ control: form.control, name: "eventType" });
  const networkSlug = useWatch({ control: form.control, name: "network" });
  const networks = networksFor(eventType);
  const network = WEBHOOK_NETWORKS.find((n) => n.slug === networkSlug) ?? networks[0]!;

  const withNetwork = (body: unknown) => ({ network: network.slug, ...(body as object) });
  const create = useMutation({
    mutationFn: (body: unknown) => api<WebhookRecord>(webhooksPath(projectId), { method: "POST", body: withNetwork(body) }),
    onSuccess: (record) => {
      setCreated(record);
      void queryClient.invalidateQueries({ queryKey: webhooksQueryKey(projectId) });
      window.scrollTo({ top: 0 });
    },
    onError: (e) => {
      const field = serverFieldError(e);
      if (field) setError(field.name as Parameters<typeof setError>[0], { type: "server", message: field.message }, { shouldFocus: true });
    },
  });

  const preview = useMutation({
    mutationFn: (body: unknown) =>
      api<{ fromBlock: string; toBlock: string; messages: unknown[] }>(`${webhooksPath(projectId)}/preview`, { method: "POST", body: withNetwork(body) }),
  });

  if (created) return <CreatedWebhook projectId={projectId} record={created} />;

  const onPreview = handleSubmit((body) => preview.mutate(body));
  const onCreate = handleSubmit((body) => create.mutate(body));
  const errors = formState.errors;

  function chooseEventType(next: EventType) {
    setValue("eventType", next, { shouldDirty: true });
    if (!networksFor(next).some((n) => n.slug === networkSlug)) setValue("network", networksFor(next)[0]!.slug, { shouldDirty: true });
    form.clearErrors("condition");
    preview.reset();
  }

  return (
    <form onSubmit={onCreate} noValidate className="space-y-6" aria-label="New webhook">
      <Card aria-labelledby="what-title">
        <CardHeader titleId="what-title" title="1. What to watch" description="Choose the kind of event first; the networks that support it follow." />
        <CardBody className="space-y-5">
          <EventTypeChoice value={eventType} onChoose={chooseEventType} />
          <Field id="wh-network" label="Network" hint={`Networks with ${eventType} webhooks.`} error={errors.network?.message}>
            <Select {...describedBy("wh-network", errors.network?.message, true)} {...register("network", { onChange: () => preview.reset() })}>
              {networks.map((n) => (
                <option key={n.slug} value={n.slug}>
                  {n.displayName}
                </option>
              ))}
            </Select>
          </Field>
          <ConditionFields form={form} idPrefix="wh" />
          <InstantField form={form} idPrefix="wh" finalityDepth={network.finalityDepth} family={network.family} />
        </CardBody>
      </Card>

      <WhereToDeliver form={form} projectId={projectId} privateUrls={privateUrls} />

      {preview.isSuccess || preview.isError || preview.isPending ? <PreviewResult preview={preview} /> : null}
      {create.isError && !serverFieldError(create.error) ? <FormError>Could not create the webhook. {errorMessage(create.error)}</FormError> : null}
      {errors.root?.message ? <FormError>{errors.root.message}</FormError> : null}

      <div className="flex flex-wrap items-center justify-end gap-2">
        <ButtonLink href={`/projects/${projectId}/webhooks`} variant="ghost">
          Cancel
        </ButtonLink>
        <Button variant="secondary" onClick={() => void onPreview()} pending={preview.isPending}>
          Preview
        </Button>
        <Button type="submit" pending={create.isPending}>
          Create webhook
        </Button>
      </div>
      <p className="text-right text-xs text-muted">Preview shows what this webhook would have matched in the network&apos;s last 100 blocks. Send a test message once it is created.</p>
    </form>
  );
}

/** The kind of event, each with what it watches. */
function EventTypeChoice({ value, onChoose }: { value: EventType; onChoose: (t: EventType) => void }) {
  return (
    <fieldset>
      <legend className="mb-2 text-sm font-medium text-fg">Event type</legend>
      <div className="grid gap-2 sm:grid-cols-3">
        {EVENT_TYPES.map((t) => (
          <label
            key={t}
            className={cn(
              "flex cursor-pointer flex-col gap-1 rounded-md border p-3 text-sm has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-focus",
              value === t ? "border-accent bg-accent-soft/60" : "border-line-strong hover:bg-subtle",
            )}
          >
            <span className="flex items-center gap-2 font-medium text-fg">
              <input type="radio" name="eventType" value={t} checked={value === t} onChange={() => onChoose(t)} className="accent-accent" />
              {EVENT_TYPE_INFO[t].label} <code className="text-xs font-normal text-muted">{t}</code>
            </span>
            <span className="text-xs text-muted">{EVENT_TYPE_INFO[t].summary}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The card of the description and the URL, where a test inbox can be made and used at once. */
function WhereToDeliver({ form, projectId, privateUrls }: { form: UseFormReturn<WebhookFormValues, unknown, CreateWebhookBody>; projectId: string; privateUrls?: "local default" | "WEBHOOK_ALLOW_PRIVATE_URLS" }) {
  const { register, setValue, formState } = form;
  const errors = formState.errors;
  const inbox = useCreateInbox(projectId);
  return (
    <Card aria-labelledby="where-title">
      <CardHeader titleId="where-title" title="2. Where to deliver" description="Messages are POSTed as JSON and signed with the webhook's key (Standard Webhooks)." />
      <CardBody className="space-y-5">
        <Field id="wh-description" label="Description" hint={`A label for you, up to ${DESCRIPTION_MAX} characters.`} error={errors.description?.message}>
          <Input autoComplete="off" placeholder="Token transfers to our treasury" {...describedBy("wh-description", errors.description?.message, true)} {...register("description")} />
        </Field>
        <Field
          id="wh-url"
          label="Webhook URL"
          hint={
            <>
              Your endpoint, or a test inbox of this project: it records what it receives so you can look at it in the console.
              {privateUrls ? (
                <span className="mt-1 block">Private and loopback URLs are allowed on this server ({privateUrls === "local default" ? "local default" : "WEBHOOK_ALLOW_PRIVATE_URLS=on"}).</span>
              ) : null}
            </>
          }
          error={errors.notification?.webhookUrl?.message}
        >
          <div className="flex flex-col gap-2 sm:flex-row">
            <Input
              type="url"
              autoComplete="off"
              spellCheck={false}
              placeholder="https://example.com/hooks/blockgate"
              className="font-mono text-[13px]"
              {...describedBy("wh-url", errors.notification?.webhookUrl?.message, true)}
              {...register("notification.webhookUrl")}
            />
            <Button
              variant="secondary"
              pending={inbox.isPending}
              onClick={() =>
                inbox.mutate(undefined, {
                  onSuccess: (created) => setValue("notification.webhookUrl", created.url, { shouldDirty: true, shouldValidate: formState.isSubmitted }),
                })
              }
            >
              Use a test inbox
            </Button>
          </div>
        </Field>
        {inbox.isError ? <FormError>Could not create a test inbox. {errorMessage(inbox.error)}</FormError> : null}
        {inbox.isSuccess ? <FormSuccess>Test inbox created: its requests show under Test inboxes on the Webhooks page.</FormSuccess> : null}
      </CardBody>
    </Card>
  );
}

function PreviewResult({ preview }: { preview: { isPending: boolean; isError: boolean; error: unknown; data?: { fromBlock: string; toBlock: string; messages: unknown[] } } }) {
  return (
    <Card aria-labelledby="preview-title">
      <CardHeader titleId="preview-title" title="Preview" />
      <CardBody className="space-y-3" aria-live="polite">
        {preview.isPending ? <p className="text-sm text-muted">Matching the last 100 blocks…</p> : null}
        {preview.isError ? <FormError>Preview is not available. {errorMessage(preview.error)}</FormError> : null}
        {preview.data ? (
          <>
            <p className="text-sm text-fg">
              {preview.data.messages.length === 0 ? "No matches" : `${preview.data.messages.length} ${preview.data.messages.length === 1 ? "match" : "matches"}`} in blocks{" "}
              {preview.data.fromBlock} to {preview.data.toBlock}.
            </p>
            {preview.data.messages.length > 0 ? (
              <pre className="max-h-96 overflow-auto rounded-md border border-line bg-subtle p-3 font-mono text-xs text-fg">{JSON.stringify(preview.data.messages, null, 2)}</pre>
            ) : null}
          </>
        ) : null}
      </CardBody>
    </Card>
  );
}

/** After creation: the signing key (copy), how to verify, and a test message. */
function CreatedWebhook({ projectId, record }: { projectId: string; record: WebhookRecord }) {
  const test = useSendTest(projectId, record.subscriptionId);
  const key = record.signingKey ?? "";
  return (
    <Card aria-labelledby="created-title">
      <CardHeader titleId="created-title" title="Webhook created" description={`“${record.description}” is active and delivers to ${record.notification.webhookUrl}.`} />
      <CardBody className="space-y-6">
        <div className="space-y-2">
          <h3 className="text-sm font-medium text-fg">Signing key</h3>
          <p className="text-sm text-muted">Your receiver checks each message&apos;s signature with this key. It is also shown on the webhook&apos;s page.</p>
          <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
            <code data-testid="signing-key" className="min-w-0 flex-1 rounded-md border border-line bg-surface px-3 py-2 font-mono text-[13px] break-all text-fg">
              {key}
            </code>
            <CopyButton value={key} label="Copy signing key" />
          </div>
        </div>
        <VerificationSnippet signingKey={key} />
        <div className="space-y-2">
          <h3 className="text-sm font-medium text-fg">Send a test message</h3>
          <p className="text-sm text-muted">A sample message of this kind goes out now, signed like the real ones.</p>
          <Button variant="secondary" onClick={() => test.mutate()} pending={test.isPending}>
            Send test
          </Button>
          {test.isError ? <FormError>Could not send a test message. {errorMessage(test.error)}</FormError> : null}
          {test.isSuccess ? <FormSuccess>Test message {test.data.messageId} queued; it appears in the delivery history.</FormSuccess> : null}
        </div>
        <Notice>Deliveries and their responses appear in the webhook&apos;s delivery history.</Notice>
        <div className="flex flex-wrap justify-end gap-2">
          <ButtonLink href={`/projects/${projectId}/webhooks`} variant="secondary">
            Back to webhooks
          </ButtonLink>
          <ButtonLink href={webhookPage(projectId, record.subscriptionId)}>View webhook</ButtonLink>
        </div>
      </CardBody>
    </Card>
  );
}
