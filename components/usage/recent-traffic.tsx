"use client";

import { useQuery } from "@tanstack/react-query";
import { api, errorMessage } from "@/components/api-client";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatNumber, formatTime } from "@/components/ui/format";
import { Skeleton } from "@/components/ui/skeleton";
import { formatMs, INTERFACE_LABELS, LIVE_REFRESH_MS, type InterfaceId, type TrafficStats, type TrafficSummary } from "./requests-data";

function Row({ label, stats, strong = false }: { label: string; stats: TrafficStats; strong?: boolean }) {
  const cell = "px-3 py-2 text-right tabular-nums";
  return (
    <tr className={strong ? "border-t border-line-strong font-semibold" : "border-t border-line"}>
      <th scope="row" className="px-3 py-2 text-left font-medium text-fg">
        {label}
      </th>
      <td className={cell}>{formatNumber(stats.requests)}</td>
      <td className={`${cell} ${stats.failed > 0 ? "text-danger-text" : ""}`}>{formatNumber(stats.failed)}</td>
      <td className={cell}>{formatMs(stats.latency.avg)}</td>
      <td className={cell}>{formatMs(stats.latency.median)}</td>
      <td className={cell}>{formatMs(stats.latency.min)}</td>
      <td className={cell}>{formatMs(stats.latency.max)}</td>
    </tr>
  );
}

/** The last 5 minutes of the project, per interface, refreshed every few seconds while open. */
export function RecentTraffic({ projectId }: { projectId: string }) {
  const query = useQuery({
    queryKey: ["traffic", projectId],
    queryFn: ({ signal }) => api<TrafficSummary>(`/api/projects/${projectId}/traffic`, { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
  const t = query.data;
  return (
    <Card aria-labelledby="recent-traffic-title">
      <CardHeader
        titleId="recent-traffic-title"
        title="Recent traffic"
        description={
          t
            ? `The last 5 minutes (since ${formatTime(t.complete ? t.from : t.coveredFrom)}), live.${t.complete ? "" : " The request log keeps the last 1,000 requests, so older ones in the window are not counted."}`
            : "The last 5 minutes, live."
        }
      />
      <CardBody>
        {query.isError && !t ? (
          <p role="alert" className="text-sm text-danger-text">
            Recent traffic could not be loaded: {errorMessage(query.error)}
          </p>
        ) : !t ? (
          <Skeleton className="h-40 w-full" />
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full text-sm" aria-describedby="recent-traffic-title">
              <thead>
                <tr className="text-xs text-muted">
                  <th scope="col" className="px-3 py-2 text-left font-medium">
                    Interface
                  </th>
                  {["Requests", "Failed", "Average", "Median", "Min", "Max"].map((h) => (
                    <th key={h} scope="col" className="px-3 py-2 text-right font-medium">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {(Object.entries(INTERFACE_LABELS) as Array<[InterfaceId, string]>).map(([id, label]) => (
                  <Row key={id} label={label} stats={t.interfaces[id]} />
                ))}
                <Row label="All interfaces" stats={t.total} strong />
              </tbody>
            </table>
            {t.total.requests === 0 ? <p className="mt-3 text-sm text-muted">No requests in the last 5 minutes.</p> : null}
          </div>
        )}
      </CardBody>
    </Card>
  );
}
