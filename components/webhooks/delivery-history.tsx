"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { FormError, FormSuccess } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { ListTable, Pager } from "@/components/ui/list-state";
import { historyQueryKey, webhookPath, webhooksPath, type HistoryItem, type Page } from "./types";

const RPP = 20;
const RESPONSE_EXCERPT = 2000;

/** Delivery attempts of one subscription, newest first, refreshed while the page is open. */
export function DeliveryHistory({ projectId, subscriptionId }: { projectId: string; subscriptionId: string }) {
  const [status, setStatus] = useState<"" | "SUCCESS" | "FAIL">("");
  const [withBodies, setWithBodies] = useState(false);
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string | null>(null);
  const params = new URLSearchParams({ subscriptionId, page: String(page), rpp: String(RPP), ...(status ? { status } : {}), ...(withBodies ? { withEventMessage: "true" } : {}) });
  const history = useQuery({
    queryKey: [...historyQueryKey(projectId, subscriptionId), status, page, withBodies],
    queryFn: ({ signal }) => api<Page<HistoryItem>>(`${webhooksPath(projectId)}/history?${params.toString()}`, { signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
  const pages = history.data ? Math.max(1, Math.ceil(history.data.total / RPP)) : 1;

  return (
    <Card aria-labelledby="history-title">
      <CardHeader
        titleId="history-title"
        title="Delivery history"
        description="Every attempt of the last 30 days, newest first. This list refreshes by itself."
        actions={
          <div className="flex flex-wrap items-end gap-3">
            <div className="flex items-center gap-2">
              <input
                id="history-bodies"
                type="checkbox"
                className="size-4 accent-accent"
                checked={withBodies}
                onChange={(e) => {
                  setWithBodies(e.target.checked);
                }}
              />
              <Label htmlFor="history-bodies" className="font-normal">
                Show message bodies
              </Label>
            </div>
            <div className="flex items-center gap-2">
              <Label htmlFor="history-status">Status</Label>
              <Select
                id="history-status"
                value={status}
                className="h-8 w-32 text-[13px]"
                onChange={(e) => {
                  setStatus(e.target.value as typeof status);
                  setPage(1);
                }}
              >
                <option value="">All</option>
                <option value="SUCCESS">Success</option>
                <option value="FAIL">Failed</option>
              </Select>
            </div>
          </div>
        }
      />
      <ListTable
        query={history}
        noun="delivery history"
        columns={["Time", "Status", "HTTP", "Duration", "Message"]}
        actionsLabel="Details"
        className="min-w-[46rem]"
        items={history.data?.items}
        empty={status ? `No ${status === "SUCCESS" ? "successful" : "failed"} attempts.` : "No deliveries yet. Messages appear here as they are sent; try Send test."}
      >
        <tbody>
          {history.data?.items.map((a) => (
            <Fragment key={a.attemptId}>
              <tr className="border-t border-line first:border-t-0" data-testid="history-row">
                <td className="px-5 py-3 whitespace-nowrap">{formatDateTime(a.attemptedAt)}</td>
                <td className="px-3 py-3">
                  <Badge tone={a.status === "SUCCESS" ? "success" : "danger"}>{a.status === "SUCCESS" ? "Success" : "Failed"}</Badge>
                </td>
                <td className="px-3 py-3 font-mono">{a.httpStatus ?? "—"}</td>
                <td className="px-3 py-3 whitespace-nowrap">{a.durationMs} ms</td>
                <td className="px-3 py-3 text-xs text-muted">
                  #{a.sequenceNumber} · {a.attempt === 0 ? "not queued" : `attempt ${a.attempt}`}
                  {a.test ? <Badge className="ml-2">Test</Badge> : null}
                  {a.replayed ? <Badge className="ml-2">Replayed</Badge> : null}
                  {a.error ? <p className="mt-0.5 max-w-64 truncate text-danger-text">{a.error}</p> : null}
                </td>
                <td className="px-5 py-3 text-right">
                  <Button variant="ghost" size="sm" aria-expanded={open === a.attemptId} aria-controls={`attempt-${a.attemptId}`} onClick={() => setOpen(open === a.attemptId ? null : a.attemptId)}>
                    {open === a.attemptId ? "Hide" : "Details"}
                  </Button>
                </td>
              </tr>
              {open === a.attemptId ? (
                <tr id={`attempt-${a.attemptId}`} className="bg-subtle/40">
                  <td colSpan={6} className="px-5 py-4">
                    <AttemptDetails projectId={projectId} item={a} withBodies={withBodies} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </ListTable>
      <Pager label="Pages of the delivery history" page={page} pages={pages} onPage={setPage} previous="Newer" next="Older" />
    </Card>
  );
}

function AttemptDetails({ projectId, item, withBodies }: { projectId: string; item: HistoryItem; withBodies: boolean }) {
  const queryClient = useQueryClient();
  const resend = useMutation({
    mutationFn: () => api<{ messageId: string }>(`${webhookPath(projectId, item.subscriptionId)}/messages/${encodeURIComponent(item.messageId)}/resend`, { method: "POST" }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: historyQueryKey(projectId, item.subscriptionId) }),
  });
  const response = item.responseBody ?? "";
  return (
    <div className="space-y-4 text-sm">
      <dl className="grid gap-x-6 gap-y-1 text-xs sm:grid-cols-[auto_1fr]">
        <dt className="text-muted">Message</dt>
        <dd className="font-mono">{item.messageId}</dd>
        <dt className="text-muted">Attempt</dt>
        <dd className="font-mono">{item.attemptId}</dd>
        {item.error ? (
          <>
            <dt className="text-muted">Error</dt>
            <dd className="text-danger-text">{item.error}</dd>
          </>
        ) : null}
      </dl>
      <div className="grid gap-4 lg:grid-cols-2">
        <div className="min-w-0 space-y-1">
          <h4 className="text-xs font-medium text-muted">Request headers</h4>
          <pre className="max-h-64 overflow-auto rounded border border-line bg-surface p-2 font-mono text-xs">{JSON.stringify(item.requestHeaders ?? {}, null, 2)}</pre>
        </div>
        <div className="min-w-0 space-y-1">
          <h4 className="text-xs font-medium text-muted">Response {response.length > RESPONSE_EXCERPT ? `(first ${RESPONSE_EXCERPT} characters)` : ""}</h4>
          <pre className="max-h-64 overflow-auto rounded border border-line bg-surface p-2 font-mono text-xs whitespace-pre-wrap">{response ? response.slice(0, RESPONSE_EXCERPT) : "(no body)"}</pre>
        </div>
      </div>
      <div className="min-w-0 space-y-1">
        <h4 className="text-xs font-medium text-muted">Message body</h4>
        {withBodies ? (
          <pre className="max-h-80 overflow-auto rounded border border-line bg-surface p-2 font-mono text-xs">{JSON.stringify(item.eventMessage ?? null, null, 2)}</pre>
        ) : (
          <p className="text-xs text-muted">Turn on “Show message bodies” above to load it.</p>
        )}
      </div>
      <div className="flex flex-wrap items-center gap-3">
        <Button variant="secondary" size="sm" onClick={() => resend.mutate()} pending={resend.isPending}>
          Resend message
        </Button>
        {resend.isError ? <FormError className="flex-1">Could not resend. {errorMessage(resend.error)}</FormError> : null}
        {resend.isSuccess ? <FormSuccess className="flex-1">Queued for delivery again.</FormSuccess> : null}
      </div>
    </div>
  );
}
