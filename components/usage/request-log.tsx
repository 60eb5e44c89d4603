"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, useSyncExternalStore, type Dispatch, type SetStateAction } from "react";
import { api, errorMessage } from "@/components/api-client";
import { Badge, type BadgeTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { Input, Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { ListTable } from "@/components/ui/list-state";
import { EmptyState } from "@/components/ui/page-header";
import { Skeleton } from "@/components/ui/skeleton";
import { formatClock, formatMs, INTERFACE_LABELS, interfaceLabel, LIVE_REFRESH_MS, STATUS_FILTERS, type RequestDetails, type RequestRow } from "./requests-data";

interface Filters {
  interface: string;
  network: string;
  status: string;
  method: string;
}

const EMPTY: Filters = { interface: "", network: "", status: "", method: "" };

const COLUMNS = ["Time (UTC)", "Interface", "Network", "Method", "Status", "Latency", "CU", "Key"];

function statusTone(r: RequestRow): BadgeTone {
  return r.statusClass === "2xx" ? "success" : r.statusClass === "rpc_error" ? "warn" : "danger";
}

function StatusBadge({ row }: { row: RequestRow }) {
  return <Badge tone={statusTone(row)}>{row.statusClass === "rpc_error" ? `${row.status} · JSON-RPC error` : row.status}</Badge>;
}

function query(f: Filters): string {
  const p = new URLSearchParams({ limit: "1000" });
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  return p.toString();
}

function Excerpt({ title, text }: { title: string; text: string }) {
  return (
    <div className="space-y-1">
      <h4 className="text-xs font-medium text-muted">{title}</h4>
      {text ? (
        <pre className="max-h-64 overflow-auto rounded-md border border-line bg-subtle p-3 font-mono text-xs break-all whitespace-pre-wrap text-fg">{text}</pre>
      ) : (
        <p className="text-sm text-muted">None.</p>
      )}
    </div>
  );
}

/** The width from which the details sit beside the log (Tailwind's xl); below it they open as a drawer. */
const SIDE_BY_SIDE = "(min-width: 80rem)";

function subscribeWide(onChange: () => void): () => void {
  const media = window.matchMedia(SIDE_BY_SIDE);
  media.addEventListener("change", onChange);
  return () => media.removeEventListener("change", onChange);
}

/** Whether the viewport is wide enough for the details beside the log. */
function useWide(): boolean {
  return useSyncExternalStore(
    subscribeWide,
    () => window.matchMedia(SIDE_BY_SIDE).matches,
    () => true,
  );
}

/**
 * A request's details. From the xl breakpoint a panel beside the log (sticky, so it stays in view);
 * below it a modal drawer over the page (a native <dialog>: the rest of the page is inert and focus
 * stays inside), so it opens where the user is rather than under 1,000 rows. Either way the focus
 * moves to its heading on open; Escape, the Close button or (for the drawer) the backdrop close it.
 */
function Details({ projectId, id, onClose }: { projectId: string; id: string; onClose: () => void }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const dialogRef = useRef<HTMLDialogElement>(null);
  const wide = useWide();
  const q = useQuery({
    queryKey: ["request", projectId, id],
    queryFn: ({ signal }) => api<RequestDetails>(`/api/projects/${projectId}/requests/${id}`, { signal }),
    staleTime: Infinity,
  });
  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
    headingRef.current?.focus();
  }, [id, wide]);
  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    // Escape on the drawer: closed by the page's own handler, as the side panel is.
    const onCancel = (e: Event) => e.preventDefault();
    dialog.addEventListener("cancel", onCancel);
    return () => dialog.removeEventListener("cancel", onCancel);
  }, [wide]);
  const d = q.data;
  const fields: Array<[string, React.ReactNode]> = d
    ? [
        ["Time", `${formatDateTime(d.at)} (${formatClock(d.at)})`],
        ["Interface", interfaceLabel(d.interface)],
        ["Network", d.network],
        ["Method", d.calls > 1 ? `batch of ${d.calls} calls` : d.method],
        ["Status", <StatusBadge key="s" row={d} />],
        ["Latency", formatMs(d.latencyMs)],
        ["CU", formatNumber(d.cu)],
        ["Key", d.keyName ?? "Deleted key"],
        ["Request id", <code key="r" className="font-mono text-xs">{d.requestId}</code>],
      ]
    : [];
  const content = (
    <>
      <CardHeader
        titleId="request-details-title"
        as="h3"
        title={
          <span ref={headingRef} tabIndex={-1} className="outline-none">
            Request details
          </span>
        }
        description="Excerpts are the first 2 KB, with API keys and secret-looking values masked."
        actions={
          <Button variant="ghost" size="sm" onClick={onClose} aria-label="Close request details">
            Close
          </Button>
        }
      />
      <CardBody className="space-y-4">
        {q.isError ? (
          <p role="alert" className="text-sm text-danger-text">
            {errorMessage(q.error)}
          </p>
        ) : !d ? (
          <Skeleton className="h-48 w-full" />
        ) : (
          <>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 text-sm">
              {fields.map(([k, v]) => (
                <div key={k} className="contents">
                  <dt className="text-muted">{k}</dt>
                  <dd className="min-w-0 break-all text-fg">{v}</dd>
                </div>
              ))}
            </dl>
            <Excerpt title="Request" text={d.path} />
            <Excerpt title="Params" text={d.params} />
            <Excerpt title="Result" text={d.result} />
          </>
        )}
      </CardBody>
    </>
  );
  if (wide) {
    return (
      <Card aria-labelledby="request-details-title" className="sticky top-4">
        {content}
      </Card>
    );
  }
  return (
    <dialog
      ref={dialogRef}
      aria-labelledby="request-details-title"
      onClick={(e) => {
        // A click on the backdrop targets the dialog element itself.
        if (e.target === e.currentTarget) onClose();
      }}
      className="fixed inset-y-0 right-0 left-auto m-0 h-dvh max-h-none w-full max-w-lg overflow-y-auto border-l border-line bg-surface p-0 text-fg shadow-xl backdrop:bg-black/30"
    >
      {content}
    </dialog>
  );
}

/** The log's rows, newest first; a row (or its time, from the keyboard) opens its details. */
function RequestRows({ rows, selected, onSelect }: { rows: RequestRow[]; selected: string | null; onSelect: (id: string) => void }) {
  return rows.map((r) => (
    <tr key={r.id} className={r.id === selected ? "border-t border-line bg-accent-soft" : "border-t border-line hover:bg-subtle"} onClick={() => onSelect(r.id)}>
      <td className="px-5 py-1.5 whitespace-nowrap">
        <button
          type="button"
          className="rounded font-mono text-xs text-accent-text underline-offset-2 hover:underline"
          aria-label={`Details of ${r.method} at ${formatClock(r.at)}`}
          aria-pressed={r.id === selected}
          data-request={r.id}
          onClick={(e) => {
            e.stopPropagation();
            onSelect(r.id);
          }}
        >
          {formatClock(r.at)}
        </button>
      </td>
      <td className="px-3 py-1.5 whitespace-nowrap">{r.interface}</td>
      <td className="px-3 py-1.5 whitespace-nowrap">{r.network}</td>
      <td className="px-3 py-1.5 font-mono text-xs">{r.calls > 1 ? `batch (${r.calls})` : r.method}</td>
      <td className="px-3 py-1.5">
        <StatusBadge row={r} />
      </td>
      <td className="px-3 py-1.5 text-right tabular-nums whitespace-nowrap">{formatMs(r.latencyMs)}</td>
      <td className="px-3 py-1.5 text-right tabular-nums">{formatNumber(r.cu)}</td>
      <td className="px-5 py-1.5 whitespace-nowrap">{r.keyName ?? "Deleted key"}</td>
    </tr>
  ));
}

const INTERFACE_OPTIONS = Object.entries(INTERFACE_LABELS).map(([id, label]) => ({ id, label }));

/** One filter's select: every value first (the empty one), then the options. */
function FilterSelect({ label, any, options, value, onChange }: { label: string; any: string; options: ReadonlyArray<{ id: string; label: string }>; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="space-y-1.5">
      <Label htmlFor={id}>{label}</Label>
      <Select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{any}</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
      </Select>
    </div>
  );
}

/** The filters: the selects apply at once, the method when applied (Enter, Apply, or leaving the field). */
function FilterForm({ filters, onChange: setFilters, networks }: { filters: Filters; onChange: Dispatch<SetStateAction<Filters>>; networks: Array<{ slug: string; label: string }> }) {
  const [method, setMethod] = useState("");
  const methodId = useId();
  const set = (k: keyof Filters) => (value: string) => setFilters((f) => ({ ...f, [k]: value }));
  const filtered = Object.values(filters).some(Boolean);
  return (
    <form
      aria-label="Filter requests"
      className="grid gap-3 sm:grid-cols-2 lg:grid-cols-5"
      onSubmit={(e) => {
        e.preventDefault();
        setFilters((f) => ({ ...f, method: method.trim() }));
      }}
    >
      <FilterSelect label="Interface" any="All interfaces" options={INTERFACE_OPTIONS} value={filters.interface} onChange={set("interface")} />
      <FilterSelect label="Network" any="All networks" options={networks.map((n) => ({ id: n.slug, label: n.label }))} value={filters.network} onChange={set("network")} />
      <FilterSelect label="Status" any="Any status" options={STATUS_FILTERS} value={filters.status} onChange={set("status")} />
      <div className="space-y-1.5">
        <Label htmlFor={methodId}>Method</Label>
        <Input id={methodId} value={method} placeholder="eth_call" onChange={(e) => setMethod(e.target.value)} onBlur={() => setFilters((f) => ({ ...f, method: method.trim() }))} />
      </div>
      <div className="flex items-end gap-2">
        <Button type="submit" variant="secondary">
          Apply
        </Button>
        {filtered ? (
          <Button
            type="button"
            variant="ghost"
            onClick={() => {
              setMethod("");
              setFilters(EMPTY);
            }}
          >
            Clear
          </Button>
        ) : null}
      </div>
    </form>
  );
}

/** The project's last 1,000 requests, filterable, refreshed live; a row opens its details. */
export function RequestLogView({ projectId, networks }: { projectId: string; networks: Array<{ slug: string; label: string }> }) {
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [selected, setSelected] = useState<string | null>(null);
  // The row whose details are being closed: its button takes the focus back.
  const returnTo = useRef<string | null>(null);
  const listRef = useRef<HTMLElement>(null);
  const q = useQuery({
    queryKey: ["requests", projectId, filters],
    queryFn: ({ signal }) => api<{ requests: RequestRow[] }>(`/api/projects/${projectId}/requests?${query(filters)}`, { signal }),
    refetchInterval: LIVE_REFRESH_MS,
    placeholderData: keepPreviousData,
  });

  useEffect(() => {
    if (!selected) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        returnTo.current = selected;
        setSelected(null);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [selected]);

  // Once the details are closed, the focus goes back to the row that opened them (when still listed).
  useEffect(() => {
    if (selected || !returnTo.current) return;
    listRef.current?.querySelector<HTMLButtonElement>(`button[data-request="${CSS.escape(returnTo.current)}"]`)?.focus();
    returnTo.current = null;
  }, [selected]);

  const rows = q.data?.requests;
  const filtered = Object.values(filters).some(Boolean);

  return (
    <div className="space-y-4">
      <FilterForm filters={filters} onChange={setFilters} networks={networks} />

      <div className={selected ? "grid items-start gap-4 xl:grid-cols-[minmax(0,1fr)_24rem]" : ""}>
        {rows?.length === 0 ? (
          <EmptyState title={filtered ? "No requests match these filters" : "No requests yet"}>
            {filtered ? "Change or clear the filters." : "Requests made with this project's keys appear here within a few seconds. Try one from the Playground."}
          </EmptyState>
        ) : (
          <Card ref={listRef}>
            <ListTable
              query={q}
              noun="requests"
              caption="Last requests of this project, newest first. Choose a row to see its params and result."
              columns={COLUMNS}
              className="min-w-[48rem]"
              items={rows}
              loadingRows={6}
            >
              <tbody>{rows ? <RequestRows rows={rows} selected={selected} onSelect={setSelected} /> : null}</tbody>
            </ListTable>
          </Card>
        )}
        {selected ? (
          <Details
            projectId={projectId}
            id={selected}
            onClose={() => {
              returnTo.current = selected;
              setSelected(null);
            }}
          />
        ) : null}
      </div>
    </div>
  );
}
