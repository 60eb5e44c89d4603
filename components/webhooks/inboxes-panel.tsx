"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { formatDateTime } from "@/components/ui/format";
import { ListState } from "@/components/ui/list-state";
import { Skeleton } from "@/components/ui/skeleton";
import { inboxesPath, inboxesQueryKey, type InboxRequest, type InboxSummary } from "./types";
import { useCreateInbox } from "./use-webhook-actions";

/** The project's test inboxes and what each received, refreshed while the page is open. */
export function InboxesPanel({ projectId }: { projectId: string }) {
  const inboxes = useQuery({
    queryKey: inboxesQueryKey(projectId),
    queryFn: ({ signal }) => api<{ items: InboxSummary[] }>(inboxesPath(projectId), { signal }).then((r) => r.items),
    refetchInterval: 5_000,
  });
  const create = useCreateInbox(projectId);
  const [open, setOpen] = useState<string | null>(null);

  return (
    <Card aria-labelledby="inboxes-title">
      <CardHeader
        titleId="inboxes-title"
        title="Test inboxes"
        description="Built-in receivers: point a webhook at one to see its messages here, with headers and whether the signature verified. Each lasts 24 hours."
        actions={
          <Button variant="secondary" size="sm" onClick={() => create.mutate()} pending={create.isPending}>
            New test inbox
          </Button>
        }
      />
      <CardBody className="space-y-4">
        {create.isError ? <FormError>Could not create a test inbox. {errorMessage(create.error)}</FormError> : null}
        {create.data ? (
          <div role="status" className="space-y-2 rounded-md border border-success-text/25 bg-success-soft p-3">
            <p className="text-sm font-medium text-success-text">Inbox created. Copy its URL now: it is shown only once.</p>
            <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
              <code data-testid="inbox-url" className="min-w-0 flex-1 rounded-md border border-line bg-surface px-3 py-2 font-mono text-[13px] break-all text-fg">
                {create.data.url}
              </code>
              <CopyButton value={create.data.url} label="Copy inbox URL" />
            </div>
          </div>
        ) : null}
        <ListState
          query={inboxes}
          noun="test inboxes"
          items={inboxes.data}
          loading={
            <div className="space-y-2">
              <Skeleton className="h-10 w-full" />
              <Skeleton className="h-10 w-full" />
            </div>
          }
          empty="No test inboxes. Create one here or with “Use a test inbox” in the webhook builder."
        >
          <ul className="divide-y divide-line rounded-md border border-line">
            {inboxes.data?.map((inbox) => (
              <InboxItem key={inbox.id} projectId={projectId} inbox={inbox} open={open === inbox.id} onToggle={() => setOpen(open === inbox.id ? null : inbox.id)} />
            ))}
          </ul>
        </ListState>
      </CardBody>
    </Card>
  );
}

function InboxItem({ projectId, inbox, open, onToggle }: { projectId: string; inbox: InboxSummary; open: boolean; onToggle: () => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api(`${inboxesPath(projectId)}/${encodeURIComponent(inbox.id)}`, { method: "DELETE" }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: inboxesQueryKey(projectId) }),
  });
  const panelId = `inbox-${inbox.id}`;
  return (
    <li data-testid="inbox">
      <div className="flex flex-wrap items-center justify-between gap-3 px-4 py-3 text-sm">
        <div className="min-w-0">
          <p className="font-mono text-fg">/v1/inbox/{inbox.tokenStart}…</p>
          <p className="text-xs text-muted">
            Created {formatDateTime(inbox.createdAt)} · expires {formatDateTime(inbox.expiresAt)} · {inbox.requests} {inbox.requests === 1 ? "request" : "requests"}
          </p>
        </div>
        <div className="flex gap-2">
          <Button variant="secondary" size="sm" aria-expanded={open} aria-controls={panelId} onClick={onToggle}>
            {open ? "Hide requests" : "Show requests"}
          </Button>
          <Button variant="ghost" size="sm" onClick={() => remove.mutate()} pending={remove.isPending} aria-label={`Delete inbox ${inbox.tokenStart}`}>
            Delete
          </Button>
        </div>
      </div>
      {remove.isError ? <FormError className="mx-4 mb-3">{errorMessage(remove.error)}</FormError> : null}
      {open ? (
        <div id={panelId} className="border-t border-line bg-subtle/40 px-4 py-3">
          <InboxRequests projectId={projectId} inboxId={inbox.id} />
        </div>
      ) : null}
    </li>
  );
}

function InboxRequests({ projectId, inboxId }: { projectId: string; inboxId: string }) {
  const requests = useQuery({
    queryKey: [...inboxesQueryKey(projectId), inboxId, "requests"],
    queryFn: ({ signal }) => api<{ items: InboxRequest[] }>(`${inboxesPath(projectId)}/${encodeURIComponent(inboxId)}/requests`, { signal }).then((r) => r.items),
    refetchInterval: 3_000,
  });
  if (requests.isPending) return <Skeleton className="h-16 w-full" />;
  if (requests.isError) return <FormError>Could not load the requests. {errorMessage(requests.error)}</FormError>;
  if (requests.data.length === 0) return <p className="text-sm text-muted">Nothing received yet. This list refreshes by itself.</p>;
  return (
    <ul className="space-y-3" aria-live="polite" aria-label="Received requests">
      {requests.data.map((r) => (
        <li key={r.id} data-testid="inbox-request" className="space-y-2 rounded-md border border-line bg-surface p-3 text-sm">
          <div className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs font-medium">{r.method}</span>
            <span className="text-xs text-muted">{formatDateTime(r.receivedAt)}</span>
            <SignatureBadge valid={r.signatureValid} />
          </div>
          <details>
            <summary className="cursor-pointer text-xs font-medium text-muted">Headers ({Object.keys(r.headers).length})</summary>
            <pre className="mt-2 overflow-x-auto rounded border border-line bg-subtle p-2 font-mono text-xs">
              {Object.entries(r.headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join("\n")}
            </pre>
          </details>
          <pre className="max-h-80 overflow-auto rounded border border-line bg-subtle p-2 font-mono text-xs">{shownBody(r)}</pre>
        </li>
      ))}
    </ul>
  );
}

function SignatureBadge({ valid }: { valid: boolean | null }) {
  if (valid === true) return <Badge tone="success">Signature verified</Badge>;
  if (valid === false) return <Badge tone="danger">Signature invalid</Badge>;
  return <Badge title="No webhook-id header naming a message of this project">Not a webhook of this project</Badge>;
}

// Control characters other than tab and line breaks, which a page would not show.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * A received body as the list shows it: JSON indented, other text as received, and bytes that are
 * not UTF-8 text, or text with control characters, as hex, 16 bytes a line.
 */
function shownBody({ body, bodyEncoding }: Pick<InboxRequest, "body" | "bodyEncoding">): string {
  if (bodyEncoding === "utf8" && !CONTROL.test(body)) {
    try {
      return JSON.stringify(JSON.parse(body), null, 2);
    } catch {
      return body || "(empty body)";
    }
  }
  const bytes = bodyEncoding === "utf8" ? new TextEncoder().encode(body) : Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += 16) lines.push(Array.from(bytes.subarray(i, i + 16), (b) => b.toString(16).padStart(2, "0")).join(" "));
  return `${bytes.length} ${bytes.length === 1 ? "byte" : "bytes"}, not text (hex):\n${lines.join("\n")}`;
}
