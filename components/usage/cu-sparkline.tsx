"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Area, AreaChart, Tooltip } from "recharts";
import { api } from "@/components/api-client";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { Skeleton } from "@/components/ui/skeleton";

import { rangeWindow, REFRESH_MS, usagePath, type UsageReport } from "./usage-data";

/** The project's CU over the last 24 hours, hour by hour, as a small chart linking to Usage. */
export function CuSparkline({ projectId }: { projectId: string }) {
  const query = useQuery({
    queryKey: ["usage-sparkline", projectId],
    queryFn: ({ signal }) => api<UsageReport>(usagePath(projectId, { ...rangeWindow("24h", "day", Date.now()), groupBy: "endpoint" }), { signal }),
    refetchInterval: REFRESH_MS * 6,
    staleTime: 0,
  });
  const report = query.data;
  const rows = report ? report.times.map((t, i) => ({ t, cu: report.total.cu[i]! })) : [];
  return (
    <Card aria-labelledby="cu-sparkline-title">
      <CardHeader
        titleId="cu-sparkline-title"
        title="Compute units, last 24 hours"
        actions={
          <Link className="text-sm text-accent-text underline" href={`/projects/${projectId}/usage`}>
            View usage
          </Link>
        }
      />
      <CardBody className="flex items-center gap-6">
        <p className="min-w-28 text-2xl font-semibold text-fg tabular-nums" data-testid="sparkline-total">
          {report ? formatNumber(report.sums.cu) : query.isError ? "—" : ""}
          <span className="ml-1 text-sm font-normal text-muted">CU</span>
        </p>
        <div role="img" aria-label={report ? `${formatNumber(report.sums.cu)} CU in the last 24 hours, hour by hour` : "Loading usage"} className="h-14 flex-1">
          {report ? (
            <AreaChart data={rows} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 2, right: 2, bottom: 2, left: 2 }}>
              <Tooltip labelFormatter={(_, p) => formatDateTime(String(p[0]?.payload?.t ?? ""))} formatter={(v) => [`${formatNumber(Number(v))} CU`, "CU"]} />
              <Area type="monotone" dataKey="cu" stroke="#6366f1" fill="#6366f1" fillOpacity={0.25} isAnimationActive={false} />
            </AreaChart>
          ) : query.isError ? (
            <p className="text-sm text-muted">Usage could not be loaded.</p>
          ) : (
            <Skeleton className="h-full w-full" />
          )}
        </div>
      </CardBody>
    </Card>
  );
}
