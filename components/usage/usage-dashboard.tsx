"use client";

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useMemo, useState } from "react";
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { api, errorMessage } from "@/components/api-client";
import { allowanceQueryKey } from "@/components/console/live-allowance-banner";
import { Button, buttonClasses } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import { Label } from "@/components/ui/label";
import { Select } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { GROUP_BY_LABELS, rangeWindow, REFRESH_MS, usagePath, type GroupBy, type RangeId, type UsageReport } from "./usage-data";

const RANGES: Array<{ id: RangeId; label: string }> = [
  { id: "1h", label: "Last hour" },
  { id: "2h", label: "Last 2 hours" },
  { id: "24h", label: "Last 24 hours" },
  { id: "7d", label: "Last 7 days" },
  { id: "30d", label: "Last 30 days" },
  { id: "period", label: "Current plan period" },
];

/** Series colours, readable on the light and the dark theme. */
const PALETTE = ["#6366f1", "#0ea5e9", "#10b981", "#f59e0b", "#ec4899", "#8b5cf6", "#14b8a6", "#94a3b8"];
/** Groups drawn one by one; the rest are summed as "Other". */
const MAX_SERIES = 7;

const pad = (n: number) => String(n).padStart(2, "0");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function tickFormatter(stepSeconds: number) {
  return (t: string) => {
    const d = new Date(t);
    if (stepSeconds >= 86_400) return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
    if (stepSeconds >= 21_600) return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCHours())}h`;
    return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  };
}

const compact = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(1)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : String(n));

interface Stacked {
  rows: Array<Record<string, number | string>>;
  series: Array<{ key: string; label: string; color: string }>;
}

/** Rows of `{ t, <series>: value }` for one metric, the largest groups first and the rest as Other. */
function stacked(report: UsageReport, metric: "cu" | "requests"): Stacked {
  const ranked = [...report.groups].sort((a, b) => b[metric].reduce((s, x) => s + x, 0) - a[metric].reduce((s, x) => s + x, 0));
  const shown = ranked.slice(0, MAX_SERIES);
  const rest = ranked.slice(MAX_SERIES);
  const series = shown.map((g, i) => ({ key: `s${i}`, label: g.label, color: PALETTE[i % PALETTE.length]! }));
  if (rest.length > 0) series.push({ key: "other", label: `Other (${rest.length})`, color: PALETTE[PALETTE.length - 1]! });
  const rows = report.times.map((t, i) => {
    const row: Record<string, number | string> = { t };
    shown.forEach((g, k) => (row[`s${k}`] = g[metric][i]!));
    if (rest.length > 0) row.other = rest.reduce((s, g) => s + g[metric][i]!, 0);
    return row;
  });
  return { rows, series };
}

function ChartCard({ title, description, summary, children }: { title: string; description: string; summary: string; children: React.ReactNode }) {
  const id = useId();
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader titleId={`${id}-title`} title={title} description={description} />
      <CardBody>
        <figure aria-labelledby={`${id}-title`} className="m-0">
          <div role="img" aria-label={summary} className="h-64 w-full">
            {children}
          </div>
          <figcaption className="sr-only">{summary}</figcaption>
        </figure>
      </CardBody>
    </Card>
  );
}

const axisProps = { stroke: "var(--fg-muted)", fontSize: 11, tickLine: false } as const;
const tooltipStyle = { contentStyle: { background: "var(--bg-surface)", border: "1px solid var(--line)", borderRadius: 6, fontSize: 12, color: "var(--fg)" } };

function StackedChart({ report, metric }: { report: UsageReport; metric: "cu" | "requests" }) {
  const { rows, series } = useMemo(() => stacked(report, metric), [report, metric]);
  const fmt = tickFormatter(report.stepSeconds);
  return (
    <AreaChart data={rows} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid stroke="var(--line)" vertical={false} />
      <XAxis dataKey="t" tickFormatter={fmt} {...axisProps} minTickGap={24} />
      <YAxis {...axisProps} tickFormatter={compact} width={48} allowDecimals={false} />
      <Tooltip labelFormatter={(t) => formatDateTime(String(t))} formatter={(v) => formatNumber(Number(v))} {...tooltipStyle} />
      <Legend wrapperStyle={{ fontSize: 12 }} />
      {series.map((s) => (
        <Area key={s.key} type="monotone" dataKey={s.key} name={s.label} stackId="1" stroke={s.color} fill={s.color} fillOpacity={0.35} isAnimationActive={false} />
      ))}
    </AreaChart>
  );
}

function OutcomeChart({ report }: { report: UsageReport }) {
  const rows = report.times.map((t, i) => ({ t, success: report.total.requests[i]! - report.total.errors[i]!, failure: report.total.errors[i]! }));
  return (
    <BarChart data={rows} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid stroke="var(--line)" vertical={false} />
      <XAxis dataKey="t" tickFormatter={tickFormatter(report.stepSeconds)} {...axisProps} minTickGap={24} />
      <YAxis {...axisProps} tickFormatter={compact} width={48} allowDecimals={false} />
      <Tooltip labelFormatter={(t) => formatDateTime(String(t))} formatter={(v) => formatNumber(Number(v))} {...tooltipStyle} />
      <Legend wrapperStyle={{ fontSize: 12 }} />
      <Bar dataKey="success" name="Succeeded" stackId="1" fill="#10b981" isAnimationActive={false} />
      <Bar dataKey="failure" name="Failed" stackId="1" fill="#ef4444" isAnimationActive={false} />
    </BarChart>
  );
}

type Percentile = "p50" | "p95" | "p99";

/**
 * A dot for a step whose neighbours have no requests (latency null): the line has no segment
 * there, so without it the step would not show. Steps inside a run of requests get none (the line
 * draws them), and gaps stay gaps (nulls are not connected: no requests, no latency).
 */
function isolatedDot(rows: Array<Partial<Record<Percentile, number | null>>>, key: Percentile, color: string, dot: { index: number; cx?: number; cy?: number }) {
  const { index, cx, cy } = dot;
  const at = (i: number) => rows[i]?.[key] ?? null;
  if (at(index) === null || at(index - 1) !== null || at(index + 1) !== null || cx === undefined || cy === undefined) return null;
  return <circle cx={cx} cy={cy} r={2.5} fill={color} stroke={color} className="recharts-line-dot" />;
}

/** "1,250 ms", with a no-break space so a tick label never wraps. */
const msTick = (v: number) => `${formatNumber(v)}\u00a0ms`;

const LATENCY_SERIES: Array<{ key: Percentile; color: string }> = [
  { key: "p50", color: "#10b981" },
  { key: "p95", color: "#f59e0b" },
  { key: "p99", color: "#ef4444" },
];

function LatencyChart({ report }: { report: UsageReport }) {
  const rows = report.times.map((t, i) => ({ t, p50: report.total.p50[i], p95: report.total.p95[i], p99: report.total.p99[i] }));
  return (
    <LineChart data={rows} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid stroke="var(--line)" vertical={false} />
      <XAxis dataKey="t" tickFormatter={tickFormatter(report.stepSeconds)} {...axisProps} minTickGap={24} />
      <YAxis {...axisProps} width={64} tickFormatter={msTick} />
      <Tooltip labelFormatter={(t) => formatDateTime(String(t))} formatter={(v) => (v === null || v === undefined ? "—" : `${String(v)} ms`)} {...tooltipStyle} />
      <Legend wrapperStyle={{ fontSize: 12 }} />
      {LATENCY_SERIES.map((s) => (
        <Line key={s.key} type="monotone" dataKey={s.key} name={s.key} stroke={s.color} dot={(d) => isolatedDot(rows, s.key, s.color, d)} connectNulls={false} isAnimationActive={false} />
      ))}
    </LineChart>
  );
}

function AllowanceBar({ allowance }: { allowance: UsageReport["allowance"] }) {
  const id = useId();
  const { allowanceCu, usedCu, overage } = allowance;
  // The real share (past 1 once the allowance is used up); the bar itself stops at full.
  const share = allowanceCu ? usedCu / allowanceCu : 0;
  const used = allowanceCu !== null && usedCu >= allowanceCu;
  const tone = used ? (overage ? "bg-[#f59e0b]" : "bg-danger") : share >= 0.8 ? "bg-[#f59e0b]" : "bg-accent";
  const percent = `${(share * 100).toFixed(1)} %`;
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        titleId={`${id}-title`}
        title="Allowance"
        description={`${allowance.label} plan, ${allowance.period === "day" ? "daily" : "monthly"} allowance. Resets ${formatDateTime(allowance.resetsAt)}.`}
      />
      <CardBody className="space-y-2">
        {allowanceCu === null ? (
          <p className="text-sm text-muted">
            {formatNumber(usedCu)} CU used this period; the allowance is set by contract.
          </p>
        ) : (
          <>
            <div
              role="progressbar"
              aria-labelledby={`${id}-title`}
              aria-valuemin={0}
              aria-valuemax={allowanceCu}
              aria-valuenow={Math.min(usedCu, allowanceCu)}
              aria-valuetext={`${formatNumber(usedCu)} of ${formatNumber(allowanceCu)} CU (${percent})`}
              className="h-3 w-full overflow-hidden rounded-full bg-subtle"
            >
              <div className={`h-full ${tone}`} style={{ width: `${(Math.min(1, share) * 100).toFixed(2)}%` }} />
            </div>
            <p className="text-sm text-fg" data-testid="allowance-text">
              <span className="font-semibold">{formatNumber(usedCu)}</span> of {formatNumber(allowanceCu)} CU used ({percent})
            </p>
            {used ? (
              <p className={overage ? "text-sm text-warn-text" : "text-sm text-danger-text"} data-testid="allowance-state">
                {overage
                  ? usedCu > allowanceCu
                    ? `Overage is on: the ${formatNumber(usedCu - allowanceCu)} CU past the allowance are overage, served and metered like every other call.`
                    : "Overage is on: calls past the allowance are served and metered as overage."
                  : `The allowance is used up: calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets at ${formatDateTime(allowance.resetsAt)}.`}
              </p>
            ) : null}
          </>
        )}
      </CardBody>
    </Card>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="space-y-1">
      <dt className="text-xs font-medium text-muted">{label}</dt>
      <dd className="text-lg font-semibold text-fg tabular-nums">{value}</dd>
    </div>
  );
}

function BreakdownTable({ report }: { report: UsageReport }) {
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return (
    <Card aria-labelledby="usage-breakdown-title">
      <CardHeader titleId="usage-breakdown-title" title={`By ${GROUP_BY_LABELS[report.groupBy].toLowerCase()}`} description="Totals over the range shown." />
      <div className="overflow-x-auto">
        <table className="w-full text-sm" data-testid="usage-breakdown">
          <thead className="text-left text-xs text-muted">
            <tr>
              <th scope="col" className="px-5 py-2 font-medium">{GROUP_BY_LABELS[report.groupBy]}</th>
              <th scope="col" className="px-5 py-2 text-right font-medium">CU</th>
              <th scope="col" className="px-5 py-2 text-right font-medium">Requests</th>
              <th scope="col" className="px-5 py-2 text-right font-medium">Errors</th>
            </tr>
          </thead>
          <tbody>
            {report.groups.map((g) => (
              <tr key={g.key} className="border-t border-line">
                <th scope="row" className="px-5 py-2 text-left font-normal text-fg">{g.label}</th>
                <td className="px-5 py-2 text-right tabular-nums">{formatNumber(sum(g.cu))}</td>
                <td className="px-5 py-2 text-right tabular-nums">{formatNumber(sum(g.requests))}</td>
                <td className="px-5 py-2 text-right tabular-nums">{formatNumber(sum(g.errors))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}

export function UsageDashboard({ projectId, period }: { projectId: string; period: "day" | "month" }) {
  const [range, setRange] = useState<RangeId>("1h");
  const [groupBy, setGroupBy] = useState<GroupBy>("method");
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: ["usage", projectId, range, groupBy],
    queryFn: async ({ signal }) => {
      const w = rangeWindow(range, period, Date.now());
      const report = await api<UsageReport>(usagePath(projectId, { ...w, groupBy }), { signal });
      // The allowance banner above the page shows the same reading as the bar.
      queryClient.setQueryData(allowanceQueryKey(projectId), report.allowance);
      return report;
    },
    refetchInterval: REFRESH_MS,
    refetchIntervalInBackground: false,
    staleTime: 0,
    placeholderData: keepPreviousData,
  });
  const report = query.data;
  const csvHref = report ? usagePath(projectId, { from: report.from, to: report.to, step: report.step, groupBy: report.groupBy, format: "csv" }) : undefined;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end gap-4">
        <div className="w-52 space-y-1.5">
          <Label htmlFor="usage-range">Time range</Label>
          <Select id="usage-range" value={range} onChange={(e) => setRange(e.target.value as RangeId)}>
            {RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </Select>
        </div>
        <div className="w-52 space-y-1.5">
          <Label htmlFor="usage-group">Break down by</Label>
          <Select id="usage-group" value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
            {(Object.keys(GROUP_BY_LABELS) as GroupBy[]).map((g) => (
              <option key={g} value={g}>
                {GROUP_BY_LABELS[g]}
              </option>
            ))}
          </Select>
        </div>
        <div className="ml-auto flex items-center gap-3">
          <p className="text-xs text-muted" aria-live="polite">
            {query.isFetching ? "Refreshing…" : report ? `Updated every ${REFRESH_MS / 1000} s · ${report.step} steps, UTC` : ""}
          </p>
          {csvHref ? (
            <a className={buttonClasses("secondary", "sm")} href={csvHref} download>
              Export CSV
            </a>
          ) : null}
        </div>
      </div>

      {query.isError && !report ? (
        <div role="alert" className="space-y-3 rounded-lg border border-line bg-surface px-5 py-4">
          <p className="text-sm text-danger-text">Usage could not be loaded: {errorMessage(query.error)}</p>
          <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
            Try again
          </Button>
        </div>
      ) : !report ? (
        <div aria-busy="true" aria-label="Loading usage" className="space-y-4">
          <Skeleton className="h-24 w-full" />
          <Skeleton className="h-72 w-full" />
        </div>
      ) : (
        <>
          {query.isError ? (
            <p role="status" className="text-sm text-danger-text">
              The last refresh failed ({errorMessage(query.error)}); showing the previous numbers.
            </p>
          ) : null}
          <AllowanceBar allowance={report.allowance} />
          <Card aria-label="Totals">
            <CardBody>
              <dl className="grid gap-4 sm:grid-cols-4" data-testid="usage-totals">
                <Stat label="Compute units" value={formatNumber(report.sums.cu)} />
                <Stat label="Requests" value={formatNumber(report.sums.requests)} />
                <Stat label="Failed requests" value={formatNumber(report.sums.errors)} />
                <Stat label="Failure rate" value={report.sums.requests ? `${((report.sums.errors / report.sums.requests) * 100).toFixed(1)} %` : "—"} />
              </dl>
            </CardBody>
          </Card>
          {report.sums.requests === 0 ? (
            <div className="rounded-lg border border-dashed border-line-strong bg-surface px-6 py-10 text-center">
              <h2 className="text-base font-semibold text-fg">No requests in this range</h2>
              <p className="mt-2 text-sm text-muted">
                Send a request from the <Link className="text-accent-text underline" href={`/projects/${projectId}/playground`}>playground</Link> or with your API key: it appears here within seconds.
              </p>
            </div>
          ) : (
            <>
              <div className="grid gap-6 xl:grid-cols-2">
                <ChartCard title="Compute units" description={`CU per ${report.step}, by ${GROUP_BY_LABELS[report.groupBy].toLowerCase()}.`} summary={`${formatNumber(report.sums.cu)} CU in the range, by ${GROUP_BY_LABELS[report.groupBy].toLowerCase()}`}>
                  <StackedChart report={report} metric="cu" />
                </ChartCard>
                <ChartCard title="Requests" description={`Requests per ${report.step}, by ${GROUP_BY_LABELS[report.groupBy].toLowerCase()}.`} summary={`${formatNumber(report.sums.requests)} requests in the range`}>
                  <StackedChart report={report} metric="requests" />
                </ChartCard>
                <ChartCard title="Success and failure" description="Requests that succeeded and failed (failed calls cost no CU)." summary={`${formatNumber(report.sums.requests - report.sums.errors)} succeeded, ${formatNumber(report.sums.errors)} failed`}>
                  <OutcomeChart report={report} />
                </ChartCard>
                <ChartCard title="Latency" description="p50, p95 and p99 in milliseconds, read from per-step histograms." summary="Latency percentiles over time">
                  <LatencyChart report={report} />
                </ChartCard>
              </div>
              <BreakdownTable report={report} />
            </>
          )}
        </>
      )}
    </div>
  );
}
