"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { api, ApiError, errorMessage } from "@/components/api-client";
import { FormError, FormSuccess } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button, ButtonLink } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { describedBy, Field } from "@/components/ui/field";
import { formatDateTime } from "@/components/ui/format";
import { Input } from "@/components/ui/input";
import { LoadError } from "@/components/ui/list-state";
import { EmptyState, PageHeader } from "@/components/ui/page-header";
import { Skeleton } from "@/components/ui/skeleton";
import { NETWORK_DEFINITIONS } from "@/lib/network-definitions";
import type { PlanLimits } from "@/lib/plans";
import { WEBHOOK_DELIVERY_CU } from "@/lib/webhooks/catalog";
import { replaySchema, type UpdateWebhookBody } from "@/lib/webhooks/schema";
import type { WebhookRecord } from "@/lib/webhooks/record";
import { ConditionFields } from "./condition-fields";
import { conditionText, serverFieldError, updateResolver, type WebhookFormValues } from "./form";
import { DeleteWebhookDialog } from "./delete-webhook-dialog";
import { DeliveryHistory } from "./delivery-history";
import { historyQueryKey, networkName, webhookPath, webhookQueryKey, webhooksQueryKey, webhookStatus, type EventType } from "./types";
import { useSendTest } from "./use-webhook-actions";
import { VerificationSnippet } from "./verification-snippet";
import { WebhookIcon } from "./webhooks-list";

/** The console's GET answers the API record; its network is found from protocol and network. */
function slugOf(r: WebhookRecord): string {
  return NETWORK_DEFINITIONS.find((n) => n.protocol === r.protocol.toLowerCase() && n.network === r.network.toLowerCase())?.slug ?? `${r.protocol}-${r.network}`.toLowerCase();
}

/** What the project's plan allows a webhook's queue (the server enforces it; the page says it). */
type QueueLimits = Pick<PlanLimits, "label" | "maxReplayBlocks" | "maxPendingPerWebhook">;

export function WebhookDetail({ projectId, subscriptionId, plan }: { projectId: string; subscriptionId: string; plan: QueueLimits }) {
  const record = useQuery({
    queryKey: webhookQueryKey(projectId, subscriptionId),
    queryFn: ({ signal }) => api<WebhookRecord>(webhookPath(projectId, subscriptionId), { signal }),
    retry: (count, e) => !(e instanceof ApiError && e.status === 404) && count < 2,
  });

  if (record.isPending) {
    return (
      <div role="status" aria-label="Loading webhook" className="space-y-6">
        <Skeleton className="h-8 w-72" />
        <Skeleton className="h-48 w-full" />
        <Skeleton className="h-64 w-full" />
      </div>
    );
  }
  if (record.isError) {
    if (record.error instanceof ApiError && record.error.status === 404) {
      return (
        <EmptyState title="No such webhook" icon={<WebhookIcon />} action={<ButtonLink href={`/projects/${projectId}/webhooks`}>Back to webhooks</ButtonLink>}>
          <p>It may have been deleted, or it belongs to another project.</p>
        </EmptyState>
      );
    }
    return <LoadError query={record} noun="webhook" size="md" />;
  }
  return <Loaded projectId={projectId} record={record.data} plan={plan} />;
}

function Loaded({ projectId, record, plan }: { projectId: string; record: WebhookRecord; plan: QueueLimits }) {
  const router = useRouter();
  const [deleting, setDeleting] = useState(false);
  const test = useSendTest(projectId, record.subscriptionId);
  const status = webhookStatus({ isActive: record.isActive, deactivatedReason: record.deactivatedReason });

  return (
    <div className="space-y-8">
      <div className="space-y-2">
        <nav aria-label="Breadcrumb" className="text-sm text-muted">
          <ButtonLink href={`/projects/${projectId}/webhooks`} variant="ghost" size="sm" className="-ml-2.5">
            ← Webhooks
          </ButtonLink>
        </nav>
        <PageHeader
          title={record.description}
          meta={<Badge tone={status.tone}>{status.label}</Badge>}
          description={`${record.eventType} on ${networkName(slugOf(record))} · ${record.subscriptionId}`}
          actions={
            <>
              <Button variant="secondary" onClick={() => test.mutate()} pending={test.isPending}>
                Send test
              </Button>
              <Button variant="danger" onClick={() => setDeleting(true)}>
                Delete
              </Button>
            </>
          }
        />
      </div>
      {status.reason ? <FormError>Deactivated by the service: {status.reason} Turn it on again under Edit once the receiver works.</FormError> : null}
      {test.isError ? <FormError>Could not send a test message. {errorMessage(test.error)}</FormError> : null}
      {test.isSuccess ? <FormSuccess>Test message {test.data.messageId} queued; it appears in the delivery history.</FormSuccess> : null}

      <RecordCard record={record} />
      <EditCard key={record.updatedAt} projectId={projectId} record={record} />
      <ReplayCard projectId={projectId} subscriptionId={record.subscriptionId} plan={plan} />
      <DeliveryHistory projectId={projectId} subscriptionId={record.subscriptionId} />

      <DeleteWebhookDialog
        open={deleting}
        projectId={projectId}
        item={record}
        onClose={() => setDeleting(false)}
        onDeleted={() => router.push(`/projects/${projectId}/webhooks`)}
      />
    </div>
  );
}

function RecordCard({ record }: { record: WebhookRecord }) {
  const [reveal, setReveal] = useState(false);
  const key = record.signingKey ?? "";
  const { messages: _messages, message: _message, ...condition } = record.event;
  return (
    <Card aria-labelledby="record-title">
      <CardHeader titleId="record-title" title="Subscription" />
      <CardBody className="space-y-5">
        <dl className="grid gap-x-8 gap-y-3 text-sm sm:grid-cols-[10rem_1fr]">
          <dt className="text-muted">Webhook URL</dt>
          <dd className="font-mono text-[13px] break-all">{record.notification.webhookUrl}</dd>
          <dt className="text-muted">Delivery</dt>
          <dd>{record.isInstant ? "Instant: as soon as a block is seen" : "Once the block is final"}</dd>
          <dt className="text-muted">Condition</dt>
          <dd>
            <pre className="overflow-x-auto rounded border border-line bg-subtle p-2 font-mono text-xs">{JSON.stringify(condition, null, 2)}</pre>
          </dd>
          <dt className="text-muted">Messages sent</dt>
          <dd>{record.sequenceNumber}</dd>
          <dt className="text-muted">Created</dt>
          <dd>{formatDateTime(record.createdAt)}</dd>
          <dt className="text-muted">Updated</dt>
          <dd>{formatDateTime(record.updatedAt)}</dd>
          <dt className="text-muted">Signing key</dt>
          <dd className="flex flex-wrap items-center gap-2">
            <code data-testid="signing-key" className="font-mono text-[13px] break-all">
              {reveal ? key : `${key.slice(0, 10)}${"•".repeat(16)}`}
            </code>
            <Button variant="ghost" size="sm" onClick={() => setReveal(!reveal)} aria-pressed={reveal}>
              {reveal ? "Hide" : "Reveal"}
            </Button>
            <CopyButton value={key} label="Copy signing key" />
          </dd>
        </dl>
        <details>
          <summary className="cursor-pointer text-sm font-medium text-fg">How to verify messages</summary>
          <div className="mt-3">
            <VerificationSnippet signingKey={reveal ? key : "whsec_…"} />
          </div>
        </details>
      </CardBody>
    </Card>
  );
}

function formValues(record: WebhookRecord): WebhookFormValues {
  return {
    eventType: record.eventType as EventType,
    network: slugOf(record),
    description: record.description,
    notification: { webhookUrl: record.notification.webhookUrl },
    isInstant: record.isInstant,
    isActive: record.isActive,
    condition: conditionText(record.eventType, record.event),
  };
}

function EditCard({ projectId, record }: { projectId: string; record: WebhookRecord }) {
  const queryClient = useQueryClient();
  const initial = formValues(record);
  const form = useForm<WebhookFormValues, unknown, UpdateWebhookBody>({ resolver: updateResolver(initial), defaultValues: initial });
  const { register, handleSubmit, setError, formState } = form;
  const errors = formState.errors;
  const save = useMutation({
    mutationFn: (body: UpdateWebhookBody) => api<WebhookRecord>(webhookPath(projectId, record.subscriptionId), { method: "PATCH", body }),
    onSuccess: (updated) => {
      queryClient.setQueryData(webhookQueryKey(projectId, record.subscriptionId), updated);
      void queryClient.invalidateQueries({ queryKey: webhooksQueryKey(projectId) });
    },
    onError: (e) => {
      const field = serverFieldError(e);
      if (field) setError(field.name as Parameters<typeof setError>[0], { type: "server", message: field.message }, { shouldFocus: true });
    },
  });
  return (
    <Card aria-labelledby="edit-title">
      <CardHeader titleId="edit-title" title="Edit" description="A new condition restarts matching from the next block. The signing key never changes." />
      <CardBody>
        <form onSubmit={handleSubmit((body) => save.mutate(body))} noValidate className="space-y-5">
          <Field id="edit-description" label="Description" error={errors.description?.message}>
            <Input autoComplete="off" {...describedBy("edit-description", errors.description?.message)} {...register("description")} />
          </Field>
          <Field id="edit-url" label="Webhook URL" error={errors.notification?.webhookUrl?.message}>
            <Input type="url" autoComplete="off" spellCheck={false} className="font-mono text-[13px]" {...describedBy("edit-url", errors.notification?.webhookUrl?.message)} {...register("notification.webhookUrl")} />
          </Field>
          <div className="flex items-start gap-2.5">
            <input id="edit-active" type="checkbox" className="mt-0.5 size-4 accent-accent" aria-describedby="edit-active-hint" {...register("isActive")} />
            <div>
              <label htmlFor="edit-active" className="text-sm font-medium text-fg">
                Active
              </label>
              <p id="edit-active-hint" className="text-xs text-muted">
                Off pauses deliveries. Turning it on again also clears a deactivation by the service.
              </p>
            </div>
          </div>
          <ConditionFields form={form} idPrefix="edit" />
          {errors.root?.message ? <FormError>{errors.root.message}</FormError> : null}
          {save.isError && !serverFieldError(save.error) ? <FormError>Could not save. {errorMessage(save.error)}</FormError> : null}
          {save.isSuccess ? <FormSuccess>Saved.</FormSuccess> : null}
          <div className="flex justify-end gap-2">
            <Button variant="ghost" onClick={() => form.reset(initial)}>
              Discard changes
            </Button>
            <Button type="submit" pending={save.isPending}>
              Save changes
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}

function ReplayCard({ projectId, subscriptionId, plan }: { projectId: string; subscriptionId: string; plan: QueueLimits }) {
  const queryClient = useQueryClient();
  const form = useForm({ resolver: zodResolver(replaySchema), defaultValues: { fromBlock: "", toBlock: "" } });
  const errors = form.formState.errors;
  const replay = useMutation({
    mutationFn: (r: { fromBlock: bigint; toBlock: bigint }) =>
      api<{ fromBlock: string; toBlock: string; messages: number }>(`${webhookPath(projectId, subscriptionId)}/replay`, {
        method: "POST",
        body: { fromBlock: r.fromBlock.toString(), toBlock: r.toBlock.toString() },
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: historyQueryKey(projectId, subscriptionId) }),
  });
  const fieldError = (m: string | undefined) => (m ? m.charAt(0).toUpperCase() + m.slice(1) : undefined);
  return (
    <Card aria-labelledby="replay-title">
      <CardHeader
        titleId="replay-title"
        title="Replay blocks"
        description={`Match past blocks again and deliver what matches, marked as replayed: at most ${plan.maxReplayBlocks.toLocaleString("en-US")} blocks at a time on the ${plan.label} plan, ${WEBHOOK_DELIVERY_CU} CU per message queued. A webhook holds at most ${plan.maxPendingPerWebhook.toLocaleString("en-US")} messages waiting for delivery: a replay that would pass that is refused.`}
      />
      <CardBody className="space-y-3">
        <form onSubmit={form.handleSubmit((r) => replay.mutate(r))} noValidate className="flex flex-col gap-3 sm:flex-row sm:items-start">
          <div className="flex-1">
            <Field id="replay-from" label="From block" error={fieldError(errors.fromBlock?.message)}>
              <Input inputMode="numeric" autoComplete="off" {...describedBy("replay-from", errors.fromBlock?.message)} {...form.register("fromBlock")} />
            </Field>
          </div>
          <div className="flex-1">
            <Field id="replay-to" label="To block" error={fieldError(errors.toBlock?.message)}>
              <Input inputMode="numeric" autoComplete="off" {...describedBy("replay-to", errors.toBlock?.message)} {...form.register("toBlock")} />
            </Field>
          </div>
          <Button type="submit" variant="secondary" pending={replay.isPending} className="sm:mt-[1.625rem]">
            Replay
          </Button>
        </form>
        {replay.isError ? <FormError>Could not replay. {errorMessage(replay.error)}</FormError> : null}
        {replay.isSuccess ? (
          <FormSuccess>
            Blocks {replay.data.fromBlock} to {replay.data.toBlock}: {replay.data.messages} {replay.data.messages === 1 ? "message" : "messages"} queued.
          </FormSuccess>
        ) : null}
      </CardBody>
    </Card>
  );
}
