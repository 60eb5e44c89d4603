/**
 * `npm run bench -- usage`: usage accounting's three targets in one run.
 *
 *   1. Charts (this file): chart query time of the usage API over a busy project's generated
 *      history (every network, 50 endpoints, 10 keys, two status classes), read from the minute,
 *      hour and day tables as the console's ranges do, and the quota check's read. Target: the
 *      slowest chart query (any range, median) under 300 ms.
 *   2. Load (bench/usage-load.ts): gateway requests/s at c=32 with metering, limits and the
 *      request log on versus off (target: on/off ≥ 0.9), and the database writes per second at
 *      100 and 5,000 requests/s (target: flat).
 *
 * `--only charts` or `--only load` runs one part. One section in bench/RESULTS.md per run.
 */
import os from "node:os";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { networks } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { allowanceOf, usageReport, type GroupBy, type Step } from "@/lib/usage/query";
import { parseArgs } from "node:util";
import { throwawayDatabase } from "./database";
import { wholeNumberOption } from "./options";
import { machineInfo } from "./resources";
import { codeVersion, fmt, markdownTable, prependResultsSection, RESULTS_FILE } from "./results";
import { LOAD_ARGS, LOAD_OPTIONS_HELP, loadOptions, measureAccountingLoad, type PartResult } from "./usage-load";

const KEYS = 10;
const ENDPOINTS = 50;
/** Target: with 90 days of a busy project's usage stored, every chart range answers in under 300 ms. */
const TARGET_MS = 300;

const USAGE = `Usage: npm run bench -- usage [options]
  --only P          run one part: charts or load (default: both)
  --no-record       print the results without writing ${RESULTS_FILE}
Charts:
  --days N          days of generated usage history (default 90)
  --runs N          timed runs per query, after one warm-up run (default 7)
Load:
${LOAD_OPTIONS_HELP}`;

export async function usageBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...LOAD_ARGS, only: { type: "string" }, days: { type: "string" }, runs: { type: "string" }, "no-record": { type: "boolean" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.only !== undefined && values.only !== "charts" && values.only !== "load") throw new Error(`--only must be charts or load, got "${values.only}"\n${USAGE}`);
  const option = wholeNumberOption(USAGE);
  const days = option(values.days, 90, "days", { min: 1, max: 3650 });
  const runs = option(values.runs, 7, "runs", { min: 1 });
  const load = loadOptions(values, USAGE);
  const started = new Date();
  const version = codeVersion(["lib/server.ts", "lib/gateway", "lib/usage", "lib/runtime.ts", "prisma/migrations"]);

  const parts: Array<{ title: string; result: PartResult }> = [];
  if (values.only !== "load") parts.push({ title: "Chart queries", result: await measureChartQueries(days, runs) });
  if (values.only !== "charts") parts.push({ title: "What accounting costs the gateway, and the writes it causes", result: await measureAccountingLoad(load) });

  const failures = parts.flatMap((p) => p.result.failures);
  const verdicts = parts.flatMap((p) => p.result.verdicts);
  const verdictTable = markdownTable(
    ["target", "measured", "verdict"],
    [...verdicts.map((v) => [v.target, v.measured, v.pass ? "PASS" : "MISS"]), ...parts.flatMap((p) => p.result.informative).map((i) => [i.target, i.measured, "—"])],
  );
  const section = [
    `## usage — ${started.toISOString()}`,
    "",
    `- Command: \`npm run bench -- ${["usage", ...argv].join(" ")}\`.`,
    `- Code: ${version}.`,
    `- Machine: ${machineInfo()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end.`,
    "",
    ...parts.flatMap((p) => [`### ${p.title}`, "", p.result.text, ""]),
    "### Targets",
    "",
    verdictTable,
    "",
  ].join("\n");
  console.log(section);
  if (failures.length > 0) {
    console.error(`\nFAILED: not every response was 2xx, or a server died:\n  ${failures.join("\n  ")}\n(${RESULTS_FILE} not written)`);
    return 1;
  }
  if (load.cpuProf || values["no-record"]) console.log(`(${RESULTS_FILE} not written)`);
  else await prependResultsSection(section);
  return verdicts.every((v) => v.pass) ? 0 : 1;
}

/** Part 1: the usage API's chart queries over `days` of a busy project's generated history. */
async function measureChartQueries(days: number, runs: number): Promise<PartResult> {
  const pg = await throwawayDatabase("usage-");
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
  /** Slowest median of the chart queries, whatever their range, over the --days of history: the target. */
  let worst = { ms: 0, what: "" };
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
    if (median > worst.ms) worst = { ms: median, what: `${c.range} by ${c.groupBy}` };
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
  // The query usageReport sends for it (lib/usage/query.ts), with and without the histogram.
  const base = `FROM usage_hours WHERE project_id = $1 AND hour >= $2 AND hour < $3 GROUP BY 2, 3, 1`;
  const bin = "date_bin('21600 seconds', hour, 'epoch')";
  const withHist = await timeSql(
    `SELECT ${bin}, api, endpoint, sum(cu)::float8, sum(requests)::float8, sum(errors)::float8, ARRAY[${Array.from({ length: 11 }, (_, i) => `sum(latency_hist[${i + 1}])::float8`).join(", ")}] ${base}`,
  );
  const withoutHist = await timeSql(`SELECT ${bin}, api, endpoint, sum(cu)::float8, sum(requests)::float8, sum(errors)::float8 ${base}`);
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

  await pg.stop();

  const table = markdownTable(["range", "step", "groupBy", "groups", "median ms", "max ms"], rows);
  const text = `usageReport (lib/usage/query.ts, what GET /api/projects/<id>/usage answers) on a throwaway embedded PostgreSQL holding one busy project: ${slugs.length} networks, ${ENDPOINTS} endpoints spread over them, ${KEYS} keys, two status classes (${dayRows.toLocaleString("en-US")} day rows over ${days} days, ${hourRows.toLocaleString("en-US")} hour rows over 8 days, ${minuteRows.toLocaleString("en-US")} minute rows over 2 hours). Each query once to warm up, then ${runs} times; the same machine runs PostgreSQL and the bench.

${table}`;
  return {
    text,
    verdicts: [{ target: `slowest chart query over ${days} days of a busy project's usage (median, any range) < ${TARGET_MS} ms`, measured: `${fmt.ms(worst.ms)} ms (${worst.what})`, pass: worst.ms < TARGET_MS }],
    informative: [],
    failures: [],
  };
}
