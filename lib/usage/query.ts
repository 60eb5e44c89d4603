import { z } from "zod";
import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { overageApplies, periodEnd, periodStart } from "@/lib/gateway/quota";
import { networkBySlug } from "@/lib/networks";
import { PLANS } from "@/lib/plans";
import { parseTime, TIME_FORMS } from "@/lib/time";
import { parseQuery } from "@/lib/validation";
import { INTERFACE_LABELS, STATUS_LABELS } from "./labels";
import { LATENCY_BUCKETS, percentile } from "./latency";
import { minuteRetentionMs, minuteRetentionStart } from "./meter";

/** Chart steps, in seconds. */
export const STEPS = { "1m": 60, "5m": 300, "15m": 900, "1h": 3600, "6h": 21_600, "1d": 86_400 } as const;
export type Step = keyof typeof STEPS;
export const GROUP_BYS = ["endpoint", "method", "network", "key", "status"] as const;
export type GroupBy = (typeof GROUP_BYS)[number];
/** Most steps one query answers. */
export const MAX_STEPS = 1500;

/** Labels of the `api` column: the public API a call came through. */
const API_LABELS: Record<string, string> = { ...INTERFACE_LABELS, "": "Not recorded" };

/** The step a range is drawn with when none is asked for: at most a few hundred points, from the cheapest table. */
export function stepFor(spanMs: number): Step {
  const h = 3_600_000;
  if (spanMs <= 3 * h) return "1m";
  if (spanMs <= 12 * h) return "5m";
  if (spanMs <= 48 * h) return "1h";
  if (spanMs <= 14 * 24 * h) return "6h";
  return "1d";
}

const time = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const time = parseTime(v);
      if (time === null) {
        ctx.addIssue({ code: "custom", message: `"${v.slice(0, 40)}" is not a date: give ${TIME_FORMS}` });
        return z.NEVER;
      }
      return time.getTime();
    });

const QUERY = z
  .object({
    from: time(),
    to: time(),
    step: z.enum(Object.keys(STEPS) as [Step, ...Step[]], { error: `use one of ${Object.keys(STEPS).join(", ")}` }).optional(),
    groupBy: z.enum(GROUP_BYS, { error: `use one of ${GROUP_BYS.join(", ")}` }).default("endpoint"),
    format: z.enum(["json", "csv"], { error: "use json or csv" }).default("json"),
  })
  .strict();

export interface UsageQuery {
  from: number;
  to: number;
  step: Step;
  groupBy: GroupBy;
  format: "json" | "csv";
}

/** Validates the query string: 400 INVALID_PARAMETER or WRONG_RANGE_PARAMETER naming the parameter. */
export function parseUsageQuery(params: Record<string, string>, now = Date.now(), retentionMs = minuteRetentionMs()): UsageQuery {
  const q = parseQuery(QUERY, params);
  const to = q.to ?? now;
  const from = q.from ?? to - 24 * 3_600_000;
  if (from >= to) throw new AppError("WRONG_RANGE_PARAMETER", "from must be earlier than to.");
  // Steps under an hour read the minute buckets, kept for the minute retention only: a range that
  // starts before it is drawn hourly when no step is asked for, and refused when one is.
  const kept = minuteRetentionStart(now, retentionMs);
  const needsMinutes = (s: Step) => source(s).table === "usage_buckets" && alignedStart(from, s) < kept;
  let step = q.step ?? stepFor(to - from);
  if (needsMinutes(step)) {
    if (q.step !== undefined) {
      const days = retentionMs / 86_400_000;
      throw new AppError(
        "WRONG_RANGE_PARAMETER",
        `Usage per minute is kept for ${days} day${days === 1 ? "" : "s"}, so steps of ${MINUTE_STEPS.join(", ")} start at ${new Date(kept).toISOString()} at the earliest: use a step of 1h or more for this range, or a later from.`,
      );
    }
    step = "1h";
  }
  const steps = Math.ceil((to - from) / 1000 / STEPS[step]);
  if (steps > MAX_STEPS) {
    throw new AppError("WRONG_RANGE_PARAMETER", `The range holds ${steps} steps of ${step}; at most ${MAX_STEPS} are answered: use a larger step or a shorter range.`);
  }
  return { from, to, step, groupBy: q.groupBy, format: q.format };
}

export interface Series {
  cu: number[];
  requests: number[];
  errors: number[];
  /** Latency quantiles in ms per step, null where the step has no requests. */
  p50: Array<number | null>;
  p95: Array<number | null>;
  p99: Array<number | null>;
}

export interface UsageGroup extends Series {
  key: string;
  label: string;
}

export interface Allowance {
  plan: Plan;
  label: string;
  period: "day" | "month";
  allowanceCu: number | null;
  usedCu: number;
  /** Whether calls past the allowance are served and metered (overage on, on a paid plan) rather than refused with 429. */
  overage: boolean;
  periodStart: string;
  resetsAt: string;
}

export interface UsageReport {
  from: string;
  to: string;
  step: Step;
  stepSeconds: number;
  groupBy: GroupBy;
  /** Start of each step, ISO 8601. */
  times: string[];
  /** One per group that has usage in the range, most CU first. */
  groups: UsageGroup[];
  total: Series;
  sums: { cu: number; requests: number; errors: number };
  allowance: Allowance;
}

/**
 * The columns a breakdown groups by; a group's key is their values joined by ":" (`node:eth_call`).
 * Grouped by the columns themselves, not by an expression over them: PostgreSQL then computes
 * nothing per row for the grouping.
 */
const GROUP_COLUMNS: Record<GroupBy, string[]> = {
  endpoint: ["api"],
  method: ["api", "endpoint"],
  network: ["network"],
  // A key's calls, or a webhook subscription's messages (usage no key made): the one that is not "".
  key: ["key_id", "subscription_id"],
  status: ["status"],
};

/** A row's group: its key's or subscription's id when grouped by key, else its columns' values joined by ":". */
function groupOf(groupBy: GroupBy, r: Row): string {
  if (groupBy === "key") return r.g0 || r.g1!;
  return r.g1 === undefined ? r.g0 : `${r.g0}:${r.g1}`;
}

/** The table a step reads: the coarsest whose rows fit in one step. */
function source(step: Step): { table: string; column: string } {
  const s = STEPS[step];
  if (s % 86_400 === 0) return { table: "usage_days", column: "day" };
  if (s % 3600 === 0) return { table: "usage_hours", column: "hour" };
  return { table: "usage_buckets", column: "minute" };
}

/** The steps read from the minute buckets. */
const MINUTE_STEPS = (Object.keys(STEPS) as Step[]).filter((s) => source(s).table === "usage_buckets");

/** Start of the first step of a range. */
function alignedStart(from: number, step: Step): number {
  const ms = STEPS[step] * 1000;
  return Math.floor(from / ms) * ms;
}

/** The step a row falls in: the row's own time when the step is the table's granularity. */
function binSql(step: Step, column: string): string {
  const s = STEPS[step];
  if (s === 60 || s === 3600 || s === 86_400) return column;
  return `date_bin('${s} seconds', ${column}, 'epoch')`;
}

interface Row {
  bin: Date;
  /** The group's columns (GROUP_COLUMNS): one or two. */
  g0: string;
  g1?: string;
  // Sums as float8: plain numbers (exact below 2^53), not BigInts to convert.
  cu: number;
  requests: number;
  errors: number;
  hist: number[];
}

function emptySeries(n: number): Series {
  return { cu: new Array<number>(n).fill(0), requests: new Array<number>(n).fill(0), errors: new Array<number>(n).fill(0), p50: [], p95: [], p99: [] };
}

function finish(series: Series, hists: number[][]): void {
  series.p50 = hists.map((h) => percentile(h, 0.5));
  series.p95 = hists.map((h) => percentile(h, 0.95));
  series.p99 = hists.map((h) => percentile(h, 0.99));
}

/** `subscriptions`: the groups (by key) that are webhook subscriptions. */
async function labelsFor(projectId: string, groupBy: GroupBy, keys: string[], subscriptions: ReadonlySet<string>): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  if (groupBy === "key") {
    const [apiKeys, webhooks] = await Promise.all([
      db().apiKey.findMany({ where: { projectId, id: { in: keys.filter((k) => !subscriptions.has(k)) } }, select: { id: true, name: true, start: true } }),
      subscriptions.size === 0 ? [] : db().webhookSubscription.findMany({ where: { projectId, id: { in: [...subscriptions] } }, select: { id: true, description: true } }),
    ]);
    for (const r of apiKeys) labels.set(r.id, `${r.name} (${r.start}…)`);
    for (const w of webhooks) labels.set(w.id, `Webhook “${w.description}”`);
  }
  for (const k of keys) {
    if (labels.has(k)) continue;
    if (groupBy === "endpoint") labels.set(k, API_LABELS[k] ?? k);
    else if (groupBy === "method") {
      const [api, ...rest] = k.split(":");
      const name = rest.join(":");
      labels.set(k, api ? `${name} (${api})` : name);
    } else if (groupBy === "network") labels.set(k, networkBySlug(k)?.displayName ?? k);
    else if (groupBy === "status") labels.set(k, (STATUS_LABELS as Record<string, string | undefined>)[k] ?? k);
    else labels.set(k, subscriptions.has(k) ? `Deleted webhook (${k})` : `Deleted key (${k})`);
  }
  return labels;
}

/**
 * Use of the plan's allowance in the current period (read from the daily rollup, as the quota check
 * does), and whether overage applies past it.
 */
export async function allowanceOf(projectId: string, plan: Plan, now = Date.now()): Promise<Allowance> {
  const limits = PLANS[plan];
  const start = periodStart(limits.period, now);
  const resets = periodEnd(limits.period, now);
  const rows = await db().$queryRaw<{ cu: bigint | null; overage: boolean | null }[]>`
    SELECT (SELECT sum(cu) FROM usage_days WHERE project_id = ${projectId} AND day >= ${new Date(start)}) AS cu,
           (SELECT overage FROM projects WHERE id = ${projectId}) AS overage`;
  return {
    plan,
    label: limits.label,
    period: limits.period,
    allowanceCu: limits.allowanceCu,
    usedCu: Number(rows[0]?.cu ?? 0),
    overage: overageApplies(plan, rows[0]?.overage ?? false),
    periodStart: new Date(start).toISOString(),
    resetsAt: new Date(resets).toISOString(),
  };
}

/** The series the usage charts draw: per step and group, empty steps as zero. */
export async function usageReport(project: { id: string; plan: Plan }, q: UsageQuery, now = Date.now()): Promise<UsageReport> {
  const stepMs = STEPS[q.step] * 1000;
  const start = alignedStart(q.from, q.step);
  const end = Math.ceil(q.to / stepMs) * stepMs;
  const n = Math.round((end - start) / stepMs);
  const { table, column } = source(q.step);
  const hist = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `sum(latency_hist[${i + 1}])::float8`).join(", ");
  const groupColumns = GROUP_COLUMNS[q.groupBy];
  const [rows, allowance] = await Promise.all([
    db().$queryRawUnsafe<Row[]>(
      `SELECT ${binSql(q.step, column)} AS bin, ${groupColumns.map((c, i) => `${c} AS g${i}`).join(", ")},
              sum(cu)::float8 AS cu, sum(requests)::float8 AS requests, sum(errors)::float8 AS errors, ARRAY[${hist}] AS hist
       FROM ${table}
       WHERE project_id = $1 AND ${column} >= $2 AND ${column} < $3
       GROUP BY ${groupColumns.map((_, i) => i + 2).join(", ")}, 1`,
      project.id,
      new Date(start),
      new Date(end),
    ),
    allowanceOf(project.id, project.plan, now),
  ]);

  const total = emptySeries(n);
  const totalHists = Array.from({ length: n }, () => new Array<number>(LATENCY_BUCKETS).fill(0));
  const groups = new Map<string, { series: Series; hists: number[][]; cu: number; requests: number }>();
  const subscriptions = new Set<string>();
  for (const r of rows) {
    const i = Math.round((r.bin.getTime() - start) / stepMs);
    if (i < 0 || i >= n) continue;
    const grp = groupOf(q.groupBy, r);
    if (q.groupBy === "key" && r.g0 === "") subscriptions.add(grp);
    let g = groups.get(grp);
    if (!g) {
      g = { series: emptySeries(n), hists: Array.from({ length: n }, () => new Array<number>(LATENCY_BUCKETS).fill(0)), cu: 0, requests: 0 };
      groups.set(grp, g);
    }
    const { cu, requests, errors } = r;
    g.series.cu[i]! += cu;
    g.series.requests[i]! += requests;
    g.series.errors[i]! += errors;
    g.cu += cu;
    g.requests += requests;
    total.cu[i]! += cu;
    total.requests[i]! += requests;
    total.errors[i]! += errors;
    r.hist.forEach((v, k) => {
      g.hists[i]![k]! += v;
      totalHists[i]![k]! += v;
    });
  }
  finish(total, totalHists);
  const keys = [...groups.keys()];
  const labels = await labelsFor(project.id, q.groupBy, keys, subscriptions);
  const ordered = [...groups.entries()].sort((a, b) => b[1].cu - a[1].cu || b[1].requests - a[1].requests || a[0].localeCompare(b[0]));
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return {
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    step: q.step,
    stepSeconds: STEPS[q.step],
    groupBy: q.groupBy,
    times: Array.from({ length: n }, (_, i) => new Date(start + i * stepMs).toISOString()),
    groups: ordered.map(([key, g]) => {
      finish(g.series, g.hists);
      return { key, label: labels.get(key) ?? key, ...g.series };
    }),
    total,
    sums: { cu: sum(total.cu), requests: sum(total.requests), errors: sum(total.errors) },
    allowance,
  };
}

const csvCell = (v: string | number | null) => {
  if (v === null) return "";
  if (typeof v === "number") return String(v);
  // A text a spreadsheet would run as a formula (a key named =HYPERLINK(…)) starts with ' instead (OWASP's CSV injection advice).
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * The report as CSV: one row per step and group (zeros included), then one row per step for all
 * groups together (group `all`), with the same numbers as the JSON answer.
 */
export function usageCsv(r: UsageReport): string {
  const lines = [["time", "group", "label", "cu", "requests", "errors", "p50_ms", "p95_ms", "p99_ms"].join(",")];
  const rows = (key: string, label: string, s: Series) => {
    r.times.forEach((t, i) => {
      lines.push([t, key, label, s.cu[i]!, s.requests[i]!, s.errors[i]!, s.p50[i] ?? null, s.p95[i] ?? null, s.p99[i] ?? null].map(csvCell).join(","));
    });
  };
  for (const g of r.groups) rows(g.key, g.label, g);
  rows("all", "All", r.total);
  return lines.join("\n") + "\n";
}
