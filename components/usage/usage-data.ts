/** Shapes of GET /api/projects/<id>/usage (lib/usage/query.ts) and the ranges the console offers. */

export type { GroupBy, Series, UsageReport } from "@/lib/usage/query";
import type { GroupBy } from "@/lib/usage/query";

export type RangeId = "1h" | "2h" | "24h" | "7d" | "30d" | "period";

export const GROUP_BY_LABELS: Record<GroupBy, string> = {
  endpoint: "API",
  method: "Endpoint / method",
  network: "Network",
  key: "API key",
  status: "Status",
};

/** How often an open usage view asks for fresh numbers. */
export const REFRESH_MS = 5000;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** From, to and step of a range at `now`; the plan period runs from its start to its reset. */
export function rangeWindow(range: RangeId, period: "day" | "month", now: number): { from: number; to: number; step: string } {
  switch (range) {
    case "1h":
      return { from: now - HOUR, to: now, step: "1m" };
    case "2h":
      return { from: now - 2 * HOUR, to: now, step: "1m" };
    case "24h":
      return { from: now - DAY, to: now, step: "1h" };
    case "7d":
      return { from: now - 7 * DAY, to: now, step: "6h" };
    case "30d":
      return { from: now - 30 * DAY, to: now, step: "1d" };
    case "period": {
      const d = new Date(now);
      if (period === "day") {
        const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
        return { from, to: from + DAY, step: "1h" };
      }
      return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), step: "1d" };
    }
  }
}

export function usagePath(projectId: string, params: { from: number | string; to: number | string; step: string; groupBy: GroupBy; format?: "csv" }): string {
  const q = new URLSearchParams({
    from: typeof params.from === "number" ? new Date(params.from).toISOString() : params.from,
    to: typeof params.to === "number" ? new Date(params.to).toISOString() : params.to,
    step: params.step,
    groupBy: params.groupBy,
  });
  if (params.format) q.set("format", params.format);
  return `/api/projects/${encodeURIComponent(projectId)}/usage?${q.toString()}`;
}
