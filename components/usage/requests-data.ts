/** Shapes of GET /api/projects/<id>/requests and /traffic (lib/usage/requests.ts), for the console. */

import { INTERFACE_LABELS as LABELS, STATUS_LABELS } from "@/lib/usage/labels";
import type { TrafficSummary } from "@/lib/usage/requests";

/** The public interfaces the request log and the traffic summary know. */
export type InterfaceId = keyof TrafficSummary["interfaces"];

export const INTERFACE_LABELS: Record<InterfaceId, string> = LABELS;

/** The label of an interface as a log row names it (its id when unknown). */
export const interfaceLabel = (id: string): string => (INTERFACE_LABELS as Record<string, string | undefined>)[id] ?? id;

export const STATUS_FILTERS: Array<{ id: string; label: string }> = [
  { id: "2xx", label: STATUS_LABELS["2xx"] },
  { id: "failed", label: "Any failure" },
  { id: "4xx", label: STATUS_LABELS["4xx"] },
  { id: "5xx", label: STATUS_LABELS["5xx"] },
  { id: "rpc_error", label: STATUS_LABELS.rpc_error },
];

export type { RequestDetails, RequestRow, TrafficStats, TrafficSummary } from "@/lib/usage/requests";

/** How often the live views ask for fresh rows. */
export const LIVE_REFRESH_MS = 3000;

export const formatMs = (ms: number | null) => (ms === null ? "—" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);

/** "14:05:09.123" in UTC. */
export function formatClock(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}
