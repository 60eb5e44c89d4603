/**
 * `npm run bench -- usage [--days 90] [--runs 7]`: chart query time of the usage API over a busy
 * project's generated history (every network, 50 endpoints, 10 keys, two status classes), read
 * from the minute, hour and day tables as the console's ranges do, and the quota check's read.
 * What metering costs the gateway under load, and the writes it causes: bench/usage-load.ts.
 */
import os from "node:os";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { networks } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { allowanceOf, usageReport, type GroupBy, type Step } from "@/lib/usage/query";
import { throwawayDatabase } from "./database";
import { machineInfo } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection } from "./results";

const KEYS = 10;
const ENDPOINTS = 50;
/** Target of issue "Usage": a 90-day chart in under 300 ms. */
const TARGET_MS = 300;

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}

export async function usageBench(argv: string[]): Promise<number> {
  if (argv.includes("--help")) {
    console.log("npm run bench -- usage [--days 90] [--runs 7] [--no-record]");
    return 0;
  }
  const days = option(argv, "days", 90);
  const runs = option(argv, "runs", 7);
  await throwawayDatabase("usage-");
  resetEnv();
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: "correct horse battery" });
  const { projectId } = await createProject(user.id, "Busy project");
  await db().project.update({ where: { id: projectId }, data: { plan: "BUSINESS" } });

  // Every network; each gets its share of 50 endpoints, on every key, in two status classes.
  const slugs = networks().map((n) => n.slug);
  const combos = Array.from({ length: ENDPOINTS }, (_, i) => ({ network: slugs[i % slugs.length]!, endpoint: `method_${String(i).padStart(2, "0")}` }));
  const now = Date.now();
  const hourNow = now - (now % 3_600_000);
  const dayNow = now - (now % 86_400_000);
  const minuteNow = now - (now % 60_000);
  const generate = async (table: string, column: string, start: number, end: number, stepSql: string) => {
    const started = performance.now();
    await db().$executeRawUnsafe(
      `INSERT INTO ${table} (project_id, key_id, network, api, endpoint, status, ${column}, cu, requests, errors, latency_ms_sum, latency_hist)
       SELECT $1, 'key_' || k, c.network, 'node', c.endpoint, s.status, t, 20 * r, r, CASE WHEN s.status = '2xx' THEN 0 ELSE r END, 12 * r,
              ARRAY[r / 4, r / 4, r / 4, r / 8, r / 16, r - (r / 4) * 3 - r / 8 - r / 16, 0, 0, 0, 0, 0]
       FROM generate_series($2::timestamptz, $3::timestamptz, $4::interval) AS t,
            generate_series(1, ${KEYS}) AS k,
            unnest($5::text[], $6::text[]) AS c(network, endpoint),
            (VALUES ('2xx', 40), ('rpc_error', 2)) AS s(status, r)`,
      projectId,
      new Date(start),
      new Date(end),
      stepSql,
      combos.map((c) => c.network),
      combos.map((c) => c.endpoint),
    );
    const count = await db().$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM ${table}`);
    console.error(`[bench] ${table}: ${Number(count[0]!.n).toLocaleString("en-US")} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return Number(count[0]!.n);
  };
  console.error(`[bench] generating ${days} days of usage (${slugs.length} networks, ${ENDPOINTS} endpoints, ${KEYS} keys)…`);
  const dayRows = await generate("usage_days", "day", dayNow - (days - 1) * 86_400_000, dayNow, "1 day");
  // Hours for the ranges drawn from them (24 h, 7 d) with a margin; minutes for the last 2 hours.
  const hourRows = await generate("usage_hours", "hour", hourNow - 8 * 24 * 3_600_000, hourNow, "1 hour");
  const minuteRows = await generate("usage_buckets", "minute", minuteNow - 120 * 60_000, minuteNow, "1 minute");
  await db().$executeRawUnsafe("VACUUM ANALYZE usage_days");
  await db().$executeRawUnsafe("VACUUM ANALYZE usage_hours");
  await db().$executeRawUnsafe("VACUUM ANALYZE usage_buckets");

  const cases: Array<{ range: string; ms: number; step: Step; groupBy: GroupBy }> = [];
  for (const groupBy of ["method", "key"] as GroupBy[]) {
    cases.push({ range: "1 h", ms: 3_600_000, step: "1m", groupBy });
    cases.push({ range: "24 h", ms: 86_400_000, step: "1h", groupBy });
    cases.push({ range: "7 d", ms: 7 * 86_400_000, step: "6h", groupBy });
    cases.push({ range: "30 d", ms: 30 * 86_400_000, step: "1d", groupBy });
    cases.push({ range: `${days} d`, ms: days * 86_400_000, step: "1d", groupBy });
  }
  const project = { id: projectId, plan: "BUSINESS" as const };
  const rows: string[][] = [];
  /** Slowest median of the 90-day (the --days) queries: the target. */
  let worst = 0;
  for (const c of cases) {
    const times: number[] = [];
    let groups = 0;
    for (let i = 0; i < runs + 1; i++) {
      const started = performance.now();
      const r = await usageReport(project, { from: now - c.ms, to: now, step: c.step, groupBy: c.groupBy, format: "json" }, now);
      if (i > 0) times.push(performance.now() - started); // the first run warms the caches
      groups = r.groups.length;
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    if (c.ms === days * 86_400_000) worst = Math.max(worst, median);
    rows.push([c.range, c.step, c.groupBy, String(groups), fmt.ms(median), fmt.ms(times[times.length - 1]!)]);
  }
  // Where the time goes: the slowest kind of query (7 d from hours, by method) with and without
  // the latency histogram's eleven sums.
  const timeSql = async (sql: string) => {
    const t: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const started = performance.now();
      await db().$queryRawUnsafe(sql, projectId, new Date(now - 7 * 86_400_000), new Date(now));
      if (i > 0) t.push(performance.now() - started);
    }
    return t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
  };
  const base = `FROM usage_hours WHERE project_id = $1 AND hour >= $2 AND hour < $3 GROUP BY 1, 2`;
  const bin = "to_timestamp(floor(extract(epoch FROM hour) / 21600) * 21600)";
  const withHist = await timeSql(
    `SELECT ${bin}, api || ':' || endpoint, sum(cu), sum(requests), sum(errors), ARRAY[${Array.from({ length: 11 }, (_, i) => `sum(latency_hist[${i + 1}])`).join(", ")}] ${base}`,
  );
  const withoutHist = await timeSql(`SELECT ${bin}, api || ':' || endpoint, sum(cu), sum(requests), sum(errors) ${base}`);
  rows.push(["7 d SQL only, with histogram", "6h", "method", "50", fmt.ms(withHist), "—"]);
  rows.push(["7 d SQL only, without histogram", "6h", "method", "50", fmt.ms(withoutHist), "—"]);
  const quota: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await allowanceOf(projectId, "BUSINESS", now);
    quota.push(performance.now() - started);
  }
  quota.sort((a, b) => a - b);
  rows.push(["plan period (quota read)", "—", "—", "—", fmt.ms(quota[Math.floor(quota.length / 2)]!), fmt.ms(quota[quota.length - 1]!)]);
  await disconnectDb();

  const table = markdownTable(["range", "step", "groupBy", "groups", "median ms", "max ms"], rows);
  const verdict = `| target | measured | verdict |\n|---|---|---|\n| slowest ${days}-day chart query (median) < ${TARGET_MS} ms | ${fmt.ms(worst)} ms | ${worst < TARGET_MS ? "PASS" : "FAIL"} |`;
  const section = [
    `## usage — ${new Date().toISOString()}`,
    "",
    `Machine: ${machineInfo()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (other work shares the cores). Code: ${codeVersion(["lib/usage", "prisma/migrations"])}.`,
    "",
    `Run: \`npm run bench -- usage --days ${days} --runs ${runs}\`: usageReport (lib/usage/query.ts, what GET /api/projects/<id>/usage answers) on a throwaway embedded PostgreSQL holding one busy project: ${slugs.length} networks, ${ENDPOINTS} endpoints spread over them, ${KEYS} keys, two status classes (${dayRows.toLocaleString("en-US")} day rows over ${days} days, ${hourRows.toLocaleString("en-US")} hour rows over 8 days, ${minuteRows.toLocaleString("en-US")} minute rows over 2 hours). Each query once to warm up, then ${runs} times; the same machine runs PostgreSQL and the bench.`,
    "",
    table,
    "",
    verdict,
    "",
  ].join("\n");
  console.log(section);
  if (!argv.includes("--no-record")) await prependResultsSection(section);
  return worst < TARGET_MS ? 0 : 1;
}
