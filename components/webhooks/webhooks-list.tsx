"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { Badge } from "@/components/ui/badge";
import { Button, ButtonLink } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { ListTable, Pager } from "@/components/ui/list-state";
import { EmptyState } from "@/components/ui/page-header";
import { DeleteWebhookDialog } from "./delete-webhook-dialog";
import { ActiveSwitch } from "./active-switch";
import { networkName, successRate, webhookPage, webhooksListQueryKey, webhooksPath, webhooksQueryKey, webhookStatus, type ConsoleWebhook, type Page } from "./types";

const RPP = 20;

export const WebhookIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 20 20" className="size-5" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round">
    <path d="M8.5 6.2a2.8 2.8 0 1 1 3.6 2.7l-2 3.9M5.3 11.5a2.8 2.8 0 1 0 3.2 3.7h4.3M14.7 12.6a2.8 2.8 0 1 0-1.5-5.2" />
  </svg>
);

export function WebhooksList({ projectId }: { projectId: string }) {
  const [page, setPage] = useState(1);
  const [deleting, setDeleting] = useState<ConsoleWebhook | null>(null);
  const list = useQuery({
    queryKey: [...webhooksListQueryKey(projectId), page],
    queryFn: ({ signal }) => api<Page<ConsoleWebhook>>(`${webhooksPath(projectId)}?page=${page}&rpp=${RPP}`, { signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / RPP)) : 1;

  if (list.data && list.data.total === 0) {
    return (
      <EmptyState
        title="No webhooks yet"
        icon={<WebhookIcon />}
        action={<ButtonLink href={`/projects/${projectId}/webhooks/new`}>Create webhook</ButtonLink>}
      >
        <p>Get an HTTP POST when a contract emits a log, an Aptos transaction matches, or every N blocks. A test inbox lets you try one without a server of your own.</p>
      </EmptyState>
    );
  }

  return (
    <Card aria-labelledby="webhooks-title">
      <CardHeader
        titleId="webhooks-title"
        title="Subscriptions"
        description={list.data ? `${list.data.total} ${list.data.total === 1 ? "webhook" : "webhooks"} on all networks. Success rates cover the last 24 hours.` : "Webhooks on all networks."}
      />
      <ListTable
        query={list}
        noun="webhooks"
        columns={["Webhook", "Network", "Created", "Status", "Success (24 h)"]}
        actionsLabel="Actions"
        className="min-w-[52rem]"
        items={list.data?.items}
        loadingRows={3}
      >
        <tbody>
          {list.data?.items.map((w) => (
            <WebhookRow key={w.subscriptionId} projectId={projectId} item={w} onDelete={() => setDeleting(w)} />
          ))}
        </tbody>
      </ListTable>
      <Pager label="Pages of webhooks" page={page} pages={pages} onPage={setPage} />
      {deleting ? (
        <DeleteWebhookDialog
          open
          projectId={projectId}
          item={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null);
            if (list.data && list.data.items.length === 1 && page > 1) setPage(page - 1);
          }}
        />
      ) : null}
    </Card>
  );
}

function WebhookRow({ projectId, item, onDelete }: { projectId: string; item: ConsoleWebhook; onDelete: () => void }) {
  const status = webhookStatus(item);
  const rate = successRate(item.deliveries24h);
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: (isActive: boolean) => api(`${webhooksPath(projectId)}/${encodeURIComponent(item.subscriptionId)}`, { method: "PATCH", body: { isActive } }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: webhooksQueryKey(projectId) }),
  });
  return (
    <tr className="border-t border-line align-top first:border-t-0" data-testid="webhook-row">
      <td className="px-5 py-3.5">
        <Link href={webhookPage(projectId, item.subscriptionId)} className="font-medium text-fg hover:underline focus-visible:underline">
          {item.description}
        </Link>
        <div className="mt-0.5 flex items-center gap-2 text-xs text-muted">
          <code>{item.eventType}</code>
          <span className="font-mono">{item.subscriptionId}</span>
        </div>
      </td>
      <td className="px-3 py-3.5 whitespace-nowrap">{networkName(item.slug)}</td>
      <td className="px-3 py-3.5 whitespace-nowrap text-muted">{formatDateTime(item.createdAt)}</td>
      <td className="px-3 py-3.5">
        <Badge tone={status.tone}>{status.label}</Badge>
        {status.reason ? <p className="mt-1 max-w-56 text-xs text-danger-text">{status.reason}</p> : null}
      </td>
      <td className="px-3 py-3.5 whitespace-nowrap">{rate ?? <span className="text-muted">No deliveries</span>}</td>
      <td className="px-5 py-3.5">
        <div className="flex items-center justify-end gap-2">
          <ActiveSwitch checked={item.isActive} pending={toggle.isPending} label={`Active: ${item.description}`} onChange={(v) => toggle.mutate(v)} />
          <Button variant="ghost" size="sm" onClick={onDelete} aria-label={`Delete ${item.description}`}>
            Delete
          </Button>
        </div>
        {toggle.isError ? <p role="alert" className="mt-1 text-right text-xs text-danger-text">{errorMessage(toggle.error)}</p> : null}
      </td>
    </tr>
  );
}
