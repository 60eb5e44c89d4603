/**
 * `npm run bench -- usage-load`: what usage accounting costs the gateway, and how the database
 * writes it causes grow with traffic.
 *
 *   1. Throughput: two real servers (`bin/start.mjs --api-only`, production mode, one throwaway
 *      PostgreSQL) answer POST /node/ethereum-mainnet eth_chainId at c=32, as bench/gateway.ts
 *      measures: "on" with USAGE_METERING=on and REQUEST_LOG=on (the defaults: usage meter, plan
 *      limits, request log), "off" with USAGE_METERING=off and REQUEST_LOG=off. Rounds alternate
 *      (on, off, on, off, …) so machine noise hits both; the medians are compared.
 *   2. Database writes: the "on" server at a fixed offered load of 100 and of 5,000 requests/s
 *      (autocannon overallRate); write transactions (pg_stat_database.xact_commit) and rows written
 *      (tup_inserted + tup_updated + tup_deleted, and per table from pg_stat_user_tables) of the
 *      bench's PostgreSQL over the run, per second. Each load runs twice: with PostgreSQL's
 *      autovacuum running (its transactions count with the servers'), then with autovacuum off on
 *      the throwaway database's tables (autovacuum_enabled = false), where every transaction counted is the servers'. The
 *      meter and the request log write in batches on a timer, so the servers' transactions per
 *      second must stay flat as traffic grows.
 *
 * Targets: on/off throughput ≥ 0.9 (accounting costs < 10 %); the servers' write transactions/s
 * (autovacuum off) and usage rows written/s at 5,000 req/s at most twice those at 100 req/s.
 */
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";
import { runLoad, type LoadResult } from "./load";
import { spawnNode, waitUntilReady, workerPid, type Service } from "./processes";
import { machineInfo, pinToCpu, startCpuAccounting } from "./resources";
import { wholeNumberOption } from "./options";
import { codeVersion, fmt, markdownTable, prependResultsSection, RESULTS_FILE } from "./results";
import { secret, throwawayDatabase } from "./database";
import { monotonicUs, summarizeCpuProfile } from "./cpu-profile";

const USAGE = `Usage: npm run bench -- usage-load [options]
  --rounds N        throughput rounds per mode, alternating on/off (default 5)
  --duration S      measured seconds per throughput run (default 10)
  --warmup S        warm-up seconds before each mode's first run, discarded (default 2)
  --connections C   concurrency of the throughput runs (default 32)
  --rates L         comma-separated offered loads in req/s for the write measurement (default 100,5000)
  --rate-duration S seconds per offered load (default 20)
  --no-record       print the results without writing ${RESULTS_FILE}
  --no-pin          let the scheduler place the servers and the load generator (default: servers on CPU 0, the bench process on CPU 1)
  --cpu-prof        run both servers under node --cpu-prof and print where their CPU time per request goes (no write measurement; implies --no-record)
  --verbose         echo the servers' output`;

const NETWORK = "ethereum-mainnet";
const RPC_BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
const TARGET_RATIO = 0.9;
const TARGET_FLAT = 2;
/**
 * Seconds to wait before reading PostgreSQL's statistics: a backend reports its counts at most
 * once a second while busy and within 10 s once idle (PGSTAT_IDLE_INTERVAL), and the servers
 * flush their last batch within USAGE_FLUSH_MS.
 */
const STATS_SETTLE_SEC = 11;
const USAGE_TABLES = ["usage_buckets", "usage_hours", "usage_days", "usage_flushes"];

type Mode = "on" | "off";

interface Options {
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  rates: number[];
  rateDurationSec: number;
  record: boolean;
  pin: boolean;
  cpuProf: boolean;
  verbose: boolean;
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: "string" },
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      rates: { type: "string" },
      "rate-duration": { type: "string" },
      "no-record": { type: "boolean" },
      "no-pin": { type: "boolean" },
      "cpu-prof": { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const option = wholeNumberOption(USAGE);
  const whole = (raw: string | undefined, fallback: number, name: string, min: number) => option(raw, fallback, name, { min });
  const rates = (values.rates ?? "100,5000").split(",").map((s) => Number(s.trim()));
  if (rates.length === 0 || rates.some((r) => !Number.isInteger(r) || r < 1 || r > 1_000_000)) throw new Error(`--rates must be whole req/s like 100,5000, got "${values.rates}"\n${USAGE}`);
  return {
    rounds: whole(values.rounds, 5, "rounds", 1),
    durationSec: whole(values.duration, 10, "duration", 1),
    warmupSec: whole(values.warmup, 2, "warmup", 0),
    connections: whole(values.connections, 32, "connections", 1),
    rates,
    rateDurationSec: whole(values["rate-duration"], 20, "rate-duration", 1),
    record: !(values["no-record"] ?? false) && !(values["cpu-prof"] ?? false),
    pin: !(values["no-pin"] ?? false),
    cpuProf: values["cpu-prof"] ?? false,
    verbose: values.verbose ?? false,
  };
}

const log = (msg: string) => console.error(`[bench] ${msg}`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stats {
  commits: number;
  rows: number;
  /** Rows inserted + updated + deleted per table. */
  tables: Record<string, number>;
  logInserted: number;
  logDeleted: number;
  /** Autovacuum and autoanalyze runs over all tables (each is PostgreSQL's own transactions). */
  autovacuums: number;
}

/** Write counters of the bench database (this reading's own two statements count two commits). */
async function readStats(): Promise<Stats> {
  const [d] = await db().$queryRawUnsafe<Array<{ commits: bigint; rows: bigint }>>(
    "SELECT xact_commit AS commits, tup_inserted + tup_updated + tup_deleted AS rows FROM pg_stat_database WHERE datname = current_database()",
  );
  const t = await db().$queryRawUnsafe<Array<{ relname: string; rows: bigint; ins: bigint; del: bigint; autovacuums: bigint }>>(
    "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS rows, n_tup_ins AS ins, n_tup_del AS del, autovacuum_count + autoanalyze_count AS autovacuums FROM pg_stat_user_tables",
  );
  const log = t.find((r) => r.relname === "request_logs");
  return {
    commits: Number(d!.commits),
    rows: Number(d!.rows),
    tables: Object.fromEntries(t.map((r) => [r.relname, Number(r.rows)])),
    logInserted: Number(log?.ins ?? 0),
    logDeleted: Number(log?.del ?? 0),
    autovacuums: t.reduce((n, r) => n + Number(r.autovacuums), 0),
  };
}

interface RateRow {
  autovacuum: boolean;
  offered: number;
  load: LoadResult;
  seconds: number;
  commitsPerSec: number;
  rowsPerSec: number;
  usageRowsPerSec: number;
  logInsertedPerSec: number;
  logDeletedPerSec: number;
  autovacuums: number;
  /** Server CPU per request, µs (NaN when unknown). */
  cpuUs: number;
}

/** µs of server CPU per request from a CPU accounting reading. */
function cpuPerRequest(cpu: ReturnType<ReturnType<typeof startCpuAccounting>>, requests: number): number {
  const cores = cpu?.groups.server;
  return cpu && cores !== undefined && requests > 0 ? (cores * cpu.wallSec * 1e6) / requests : NaN;
}

/** Self time per request of the busiest functions of both servers during the throughput rounds, and the difference. */
function printProfiles(work: string, windows: Record<Mode, Array<[number, number]>>, requests: Record<Mode, number>, root: string): void {
  const perFn: Record<Mode, Map<string, number>> = { on: new Map(), off: new Map() };
  for (const mode of ["on", "off"] as const) {
    const dir = path.join(work, `profile-${mode}`);
    const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".cpuprofile")) : undefined;
    if (!file) {
      console.error(`No CPU profile was written for the server (${mode}) in ${dir}.`);
      return;
    }
    const kept = path.join(os.tmpdir(), `blockgate-bench-usage-load-${mode}-${Date.now()}.cpuprofile`);
    copyFileSync(path.join(dir, file), kept);
    const summary = summarizeCpuProfile(kept, root, windows[mode]);
    console.log(`CPU profile (${mode}): ${kept}; ${(((summary.totalMs - summary.idleMs) * 1000) / requests[mode]).toFixed(1)} µs busy per request over ${requests[mode]} requests`);
    for (const f of summary.functions) perFn[mode].set(f.name, (f.selfMs * 1000) / requests[mode]);
  }
  const names = [...new Set([...perFn.on.keys(), ...perFn.off.keys()])];
  const rows = names
    .map((n) => ({ n, on: perFn.on.get(n) ?? 0, off: perFn.off.get(n) ?? 0 }))
    .sort((a, b) => b.on - b.off - (a.on - a.off))
    .slice(0, 30);
  console.log("\nSelf time per request (µs), functions costing most more with accounting on:");
  console.log(markdownTable(["function", "on", "off", "on − off"], rows.map((r) => [r.n, r.on.toFixed(2), r.off.toFixed(2), (r.on - r.off).toFixed(2)])));
}

export async function usageLoadBench(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  const root = process.cwd();
  const started = new Date();
  const version = codeVersion(["lib/server.ts", "lib/gateway", "lib/usage", "lib/runtime.ts"], root);

  // One throwaway PostgreSQL, one ENTERPRISE project (no CU/s limit nor allowance: nothing is
  // refused, but the limiter and the allowance check still run for every request when "on").
  const work = await tempDir("blockgate-usage-load-");
  const pg = await throwawayDatabase("blockgate-usage-load-");
  const nextauthSecret = secret();
  const user = await createUser({ email: `bench-${Date.now()}@example.com`, password: secret() });
  const { projectId, apiKey } = await createProject(user.id, "Usage load bench");
  await db().project.update({ where: { id: projectId }, data: { plan: Plan.ENTERPRISE } });
  cleanup.add("disconnect from PostgreSQL", () => disconnectDb());
  const headers = { "Content-Type": "application/json", "X-API-KEY": apiKey };

  // The two servers, one after the other (bin/start.mjs compiles the server on first start).
  const servers = {} as Record<Mode, { service: Service; url: string }>;
  for (const mode of ["on", "off"] as const) {
    const port = await freePort();
    const profile = opts.cpuProf ? ["--cpu-prof", "--cpu-prof-dir", path.join(work, `profile-${mode}`), "--cpu-prof-interval", "250"] : [];
    const service = spawnNode(`server (${mode})`, [...profile, "bin/start.mjs", "--api-only"], {
      cwd: root,
      echo: opts.verbose,
      env: {
        ...process.env,
        DATABASE_URL: pg.url,
        PORT: String(port),
        HOST: "127.0.0.1",
        NODE_ENV: "production",
        APP_SECRET: pg.appSecret,
        NEXTAUTH_SECRET: nextauthSecret,
        DATA_DIR: path.join(work, `data-${mode}`),
        DEVNETS: "off",
        // HTTP only: no webhook delivery workers polling the database in the background.
        ROLE: "web",
        USAGE_METERING: mode,
        REQUEST_LOG: mode,
      },
    });
    const url = `http://127.0.0.1:${port}/node/${NETWORK}`;
    log(`starting the server with accounting ${mode} on port ${port}…`);
    await waitUntilReady(service, async () => {
      const res = await fetch(url, { method: "POST", headers, body: RPC_BODY, signal: AbortSignal.timeout(5000) });
      await res.text();
      return res.status === 200;
    });
    servers[mode] = { service, url };
  }
  // The servers on CPU 0, the load generator on CPU 1 (PostgreSQL free): left to the scheduler,
  // runs of the same code gave ratios from 0.72 to 1.00, each run's rounds all alike.
  const pinned =
    opts.pin &&
    pinToCpu(
      Object.values(servers).flatMap(({ service }) => [service.pid, workerPid(service.pid)]),
      0,
    ) &&
    pinToCpu([process.pid], 1);
  if (opts.pin && !pinned) log("could not pin the servers and the load generator to CPUs (taskset missing or one CPU): running unpinned");
  // Both answer the call itself.
  for (const mode of ["on", "off"] as const) {
    const res = await fetch(servers[mode].url, { method: "POST", headers, body: RPC_BODY });
    const body = (await res.json()) as { result?: unknown };
    if (typeof body.result !== "string") throw new Error(`unexpected answer from the server (${mode}): ${JSON.stringify(body)}`);
  }

  // 1. Throughput, rounds interleaved.
  const rps: Record<Mode, number[]> = { on: [], off: [] };
  const cpuUs: Record<Mode, number[]> = { on: [], off: [] };
  const windows: Record<Mode, Array<[number, number]>> = { on: [], off: [] };
  const measured: Record<Mode, number> = { on: 0, off: 0 };
  const failures: string[] = [];
  const check = (what: string, r: LoadResult) => {
    if (r.non2xx > 0 || r.errors > 0 || r.ok2xx === 0) failures.push(`${what}: ${r.non2xx} non-2xx, ${r.errors} errors, status codes ${JSON.stringify(r.statusCodes)}`);
  };
  for (const mode of ["on", "off"] as const) {
    if (opts.warmupSec > 0) check(`warm-up (${mode})`, await runLoad({ url: servers[mode].url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.warmupSec }));
  }
  for (let round = 1; round <= opts.rounds; round++) {
    for (const mode of ["on", "off"] as const) {
      const { service, url } = servers[mode];
      const pids = [...new Set([service.pid, workerPid(service.pid)])];
      const stopCpu = startCpuAccounting({ server: () => pids });
      const from = monotonicUs();
      const r = await runLoad({ url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.durationSec });
      windows[mode].push([from, monotonicUs()]);
      measured[mode] += r.requests;
      const cpu = stopCpu();
      check(`round ${round} (${mode})`, r);
      rps[mode].push(r.rps);
      const cores = cpu?.groups.server;
      if (cpu && cores !== undefined && r.requests > 0) cpuUs[mode].push((cores * cpu.wallSec * 1e6) / r.requests);
      log(`round ${round} accounting ${mode}: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.latency.p50)} ms${cpu ? `, others ${fmt.cores(cpu.otherCores)} cores` : ""}`);
    }
  }

  // 2. Database writes of the "on" server at fixed offered loads (the "off" server stays idle):
  // first with autovacuum running, then with it off, so the second counts only the servers' transactions.
  const rateRows: RateRow[] = [];
  const sameLoadCpu: Array<{ offered: number; on: number; off: number }> = [];
  for (const autovacuum of opts.cpuProf ? [] : [true, false]) {
    if (!autovacuum) {
      // Per table (the bench's role owns the tables, not the server's settings).
      const tables = await db().$queryRawUnsafe<Array<{ name: string }>>("SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema()");
      for (const t of tables) await db().$executeRawUnsafe(`ALTER TABLE ${t.name} SET (autovacuum_enabled = false)`);
    }
    for (const offered of opts.rates) {
      const label = `offered load ${offered} req/s, autovacuum ${autovacuum ? "on" : "off"}`;
      log(`${label} for ${opts.rateDurationSec} s (statistics settle ${STATS_SETTLE_SEC} s before and after)…`);
      await sleep(STATS_SETTLE_SEC * 1000);
      const before = await readStats();
      const stopCpu = startCpuAccounting({ server: () => [...new Set([servers.on.service.pid, workerPid(servers.on.service.pid)])] });
      const load = await runLoad({ url: servers.on.url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.rateDurationSec, overallRate: offered });
      const cpu = stopCpu();
      check(label, load);
      await sleep(STATS_SETTLE_SEC * 1000);
      const after = await readStats();
      const seconds = opts.rateDurationSec;
      const delta = (tables: string[]) => tables.reduce((n, t) => n + (after.tables[t] ?? 0) - (before.tables[t] ?? 0), 0);
      // Less this bench's own reading (two commits).
      const commitsPerSec = (after.commits - before.commits - 2) / seconds;
      rateRows.push({
        autovacuum,
        offered,
        load,
        seconds,
        commitsPerSec,
        rowsPerSec: (after.rows - before.rows) / seconds,
        usageRowsPerSec: delta(USAGE_TABLES) / seconds,
        logInsertedPerSec: (after.logInserted - before.logInserted) / seconds,
        logDeletedPerSec: (after.logDeleted - before.logDeleted) / seconds,
        autovacuums: after.autovacuums - before.autovacuums,
        cpuUs: cpuPerRequest(cpu, load.requests),
      });
      log(`${label}: achieved ${fmt.rps(load.rpsOverall)} req/s, ${commitsPerSec.toFixed(1)} transactions/s`);
      if (!autovacuum) {
        // The same offered load on the server without accounting (it writes nothing): CPU per
        // request at equal traffic, which the throughput rounds cannot give (a slower server
        // batches fewer answers per event-loop turn, and pays more per request for that alone).
        const offCpu = startCpuAccounting({ server: () => [...new Set([servers.off.service.pid, workerPid(servers.off.service.pid)])] });
        const offLoad = await runLoad({ url: servers.off.url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.rateDurationSec, overallRate: offered });
        check(`${label} (accounting off)`, offLoad);
        sameLoadCpu.push({ offered, on: cpuPerRequest(cpu, load.requests), off: cpuPerRequest(offCpu(), offLoad.requests) });
      }
    }
  }
  const died = Object.values(servers).filter((s) => s.service.exited());
  for (const s of died) failures.push(`${s.service.name} exited during the load:\n${s.service.output()}`);
  for (const s of Object.values(servers)) await s.service.stop();
  if (opts.cpuProf) printProfiles(work, windows, measured, root);

  // Report.
  const medOn = median(rps.on);
  const medOff = median(rps.off);
  const ratio = medOn / medOff;
  const throughput = markdownTable(
    ["accounting", ...rps.on.map((_, i) => `round ${i + 1} req/s`), "median req/s", "server CPU µs/req (median)"],
    (["on", "off"] as const).map((m) => [m, ...rps[m].map(fmt.rps), fmt.rps(median(rps[m])), Number.isFinite(median(cpuUs[m])) ? median(cpuUs[m]).toFixed(0) : "n/a"]),
  );
  const writes = markdownTable(
    ["autovacuum", "offered req/s", "achieved req/s", "transactions/s", "rows written/s (all)", "usage rows/s (usage_*)", "request log rows inserted/s", "request log rows deleted/s", "autovacuum + autoanalyze runs", "server CPU µs/req", "non-2xx", "errors"],
    rateRows.map((r) => [
      r.autovacuum ? "on" : "off (servers' only)",
      fmt.rps(r.offered),
      fmt.rps(r.load.rpsOverall),
      r.commitsPerSec.toFixed(1),
      r.rowsPerSec.toFixed(0),
      r.usageRowsPerSec.toFixed(1),
      r.logInsertedPerSec.toFixed(0),
      r.logDeletedPerSec.toFixed(0),
      String(r.autovacuums),
      Number.isFinite(r.cpuUs) ? r.cpuUs.toFixed(1) : "n/a",
      String(r.load.non2xx),
      String(r.load.errors),
    ]),
  );
  const verdicts: Array<{ target: string; measured: string; pass: boolean }> = [
    { target: `throughput on/off at c=${opts.connections} ≥ ${TARGET_RATIO} (accounting costs < 10 %)`, measured: `${fmt.ratio(ratio)} (${fmt.rps(medOn)} / ${fmt.rps(medOff)} req/s)`, pass: ratio >= TARGET_RATIO },
  ];
  const ours = rateRows.filter((r) => !r.autovacuum);
  const withVacuum = rateRows.filter((r) => r.autovacuum);
  const low = ours[0];
  const high = ours[ours.length - 1];
  if (low && high && high !== low) {
    const tx = high.commitsPerSec / Math.max(low.commitsPerSec, 1e-9);
    const usage = high.usageRowsPerSec / Math.max(low.usageRowsPerSec, 1e-9);
    verdicts.push({ target: `the servers' transactions/s (autovacuum off) at ${fmt.rps(high.offered)} req/s ≤ ${TARGET_FLAT} × at ${fmt.rps(low.offered)} req/s (flat)`, measured: `${high.commitsPerSec.toFixed(1)} vs ${low.commitsPerSec.toFixed(1)} (× ${fmt.ratio(tx)})`, pass: tx <= TARGET_FLAT });
    verdicts.push({ target: `usage rows written/s at ${fmt.rps(high.offered)} req/s ≤ ${TARGET_FLAT} × at ${fmt.rps(low.offered)} req/s (flat)`, measured: `${high.usageRowsPerSec.toFixed(1)} vs ${low.usageRowsPerSec.toFixed(1)} (× ${fmt.ratio(usage)})`, pass: usage <= TARGET_FLAT });
  }
  const vLow = withVacuum[0];
  const vHigh = withVacuum[withVacuum.length - 1];
  const informative: Array<{ target: string; measured: string }> = [];
  if (vLow && vHigh && vHigh !== vLow) {
    informative.push({ target: `all transactions/s with autovacuum on, ${fmt.rps(vHigh.offered)} vs ${fmt.rps(vLow.offered)} req/s`, measured: `${vHigh.commitsPerSec.toFixed(1)} vs ${vLow.commitsPerSec.toFixed(1)} (× ${fmt.ratio(vHigh.commitsPerSec / Math.max(vLow.commitsPerSec, 1e-9))}; ${vHigh.autovacuums} vs ${vLow.autovacuums} autovacuum/autoanalyze runs)` });
  }
  const cpuOn = median(cpuUs.on);
  const cpuOff = median(cpuUs.off);
  if (Number.isFinite(cpuOn) && Number.isFinite(cpuOff)) informative.push({ target: `server CPU per request, on − off, throughput rounds (c=${opts.connections}, as fast as answered)`, measured: `${(cpuOn - cpuOff).toFixed(0)} µs (${cpuOn.toFixed(0)} vs ${cpuOff.toFixed(0)})` });
  // At low rates the servers' timers (flushes, caches) dominate CPU per request: only the highest rate compares accounting.
  for (const c of sameLoadCpu.slice(-1)) informative.push({ target: `server CPU per request, on − off, both at ${fmt.rps(c.offered)} req/s offered`, measured: `${(c.on - c.off).toFixed(1)} µs (${c.on.toFixed(1)} vs ${c.off.toFixed(1)})` });
  const verdictTable = markdownTable(
    ["target", "measured", "verdict"],
    [...verdicts.map((v) => [v.target, v.measured, v.pass ? "PASS" : "MISS"]), ...informative.map((i) => [i.target, i.measured, "—"])],
  );
  const section = `## usage-load — ${started.toISOString()}

- Command: \`npm run bench -- ${["usage-load", ...argv].join(" ")}\`.
- Code: ${version}.
- Machine: ${machineInfo()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end. The load generator (autocannon, in the bench process), both servers and PostgreSQL share the cores${pinned ? "; the servers are pinned to CPU 0 and the load generator to CPU 1 (taskset), PostgreSQL runs where the scheduler puts it" : ", unpinned"}.
- Servers: two \`node bin/start.mjs --api-only\` (NODE_ENV=production, DEVNETS=off, ROLE=web: no webhook workers polling the database) on one throwaway PostgreSQL, \`POST /node/${NETWORK}\` \`eth_chainId\` (answered from the network catalog) with the key of an ENTERPRISE project. **on**: USAGE_METERING=on and REQUEST_LOG=on, the defaults: every request is metered into the per-minute buckets and rollups, passes the CU-per-second limiter and the allowance check (the ENTERPRISE plan has neither limit, so nothing is refused: the checks take their early exit) and is appended to the request log. **off**: USAGE_METERING=off and REQUEST_LOG=off: none of that runs. Everything else (key verification, routing, JSON-RPC) is the same code.
- Throughput: c=${opts.connections}, a ${opts.warmupSec} s warm-up per server, then ${opts.rounds} rounds of ${opts.durationSec} s alternating on, off, on, off, … so machine noise hits both; medians compared. Server CPU per request is the steadier comparison when the machine is busy.
- Writes: the "on" server at a fixed offered load (autocannon overallRate, c=${opts.connections}) for ${opts.rateDurationSec} s each; deltas of pg_stat_database (xact_commit, which counts read-only transactions too: on the cached-key path the servers make none; tup_inserted + tup_updated + tup_deleted) and pg_stat_user_tables, read ${STATS_SETTLE_SEC} s after the previous phase and after the load (PostgreSQL reports a backend's counts within that time), divided by the load's seconds. With autovacuum off, the server without accounting then takes the same offered load, for CPU per request at equal traffic. Usage is flushed as one statement per USAGE_FLUSH_MS for all requests. The request log holds only each project's newest 1,000 entries between flushes and writes them in one statement per flush (with the delete of the project's older rows when entries were superseded), and sweeps every 10 s: its rows inserted per second are at most 1,000 per project per flush, whatever the traffic. Counts include the servers' background work (key last-used times, sweeps). Each load runs twice: with autovacuum on, where PostgreSQL's autovacuum and autoanalyze (their own transactions, triggered by the rows written and deleted) fall in the same window and count in transactions/s (their runs are shown), then with autovacuum off for the throwaway database's tables (\`ALTER TABLE … SET (autovacuum_enabled = false)\` on every table of the schema), where the transactions counted are the servers' alone; the flatness target reads the second.

${throughput}

${writes}

${verdictTable}
`;
  console.log(section);
  if (failures.length > 0) {
    console.error(`\nFAILED: not every response was 2xx, or a server died:\n  ${failures.join("\n  ")}\n(${RESULTS_FILE} not written)`);
    return 1;
  }
  if (opts.record) await prependResultsSection(section);
  else console.log(`(--no-record: ${RESULTS_FILE} not written)`);
  return verdicts.every((v) => v.pass) ? 0 : 1;
}
