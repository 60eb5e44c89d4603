/**
 * The load part of `npm run bench -- usage` (bench/usage.ts): what usage accounting costs the
 * gateway, and how the database writes it causes grow with traffic.
 *
 *   1. Throughput: real servers (production mode, one throwaway PostgreSQL) answer
 *      POST /node/ethereum-mainnet eth_chainId at c=32, as bench/gateway.ts measures, with
 *      accounting "on" (USAGE_METERING=on and REQUEST_LOG=on, the defaults: usage meter, plan
 *      limits, request log) and "off" (both off).
 *      a. The target's measurement: processes that serve both modes (bench/accounting-server.ts:
 *         the service on one port, a second server of the same process without accounting on
 *         another), loaded in turns (on then off, or off then on), the median of the turns' ratios.
 *         Within a process the two modes share the heap and the moment, so the machine's swings
 *         cancel out; several processes, because how V8 compiles the shared code, and with it the
 *         ratio, differs from process to process.
 *      b. For comparison: separate `bin/start.mjs --api-only` processes, several per mode. On this
 *         VM identical server processes differ by up to 20 % in throughput, each keeping its rank
 *         from round to round, so one process per mode compares luck as much as accounting. Each
 *         round runs every process once, the modes alternating; a process's figure is its median
 *         over the rounds, a mode's the median of its processes'.
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
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { createProject } from "@/lib/projects/service";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";
import { percentile, runLoad, type LoadResult } from "./load";
import { spawnNode, waitUntilReady, workerPid, type Service } from "./processes";
import { pinToCpu, startCpuAccounting } from "./resources";
import { wholeNumberOption } from "./options";
import { fmt, markdownTable } from "./results";
import { secret, throwawayDatabase } from "./database";
import { monotonicUs, summarizeCpuProfile } from "./cpu-profile";

/** The load part's options, for the usage bench's help. */
export const LOAD_OPTIONS_HELP = `  --shared N        processes serving both modes, on two ports (default 6): the target's measurement
  --turns N         turns per such process, each loading its "on" port then its "off" port (or the reverse) (default 12)
  --turn-duration S measured seconds per port and turn (default 2)
  --processes N     separate server processes per mode (default 5): identical processes differ by up to 20 % in throughput here
  --rounds N        throughput rounds, each running every process once, on and off alternating (default 3)
  --duration S      measured seconds per throughput run (default 5)
  --warmup S        warm-up seconds before each process's first run, discarded (default 2)
  --connections C   concurrency of the throughput runs (default 32)
  --rates L         comma-separated offered loads in req/s for the write measurement (default 100,5000)
  --rate-duration S seconds per offered load (default 20)
  --no-pin          let the scheduler place the servers and the load generator (default: servers on CPU 0, the bench process on CPU 1)
  --cpu-prof        run the first separate server of each mode under node --cpu-prof and print where their CPU time per request goes (no write measurement; implies --no-record)
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

/** A process serving both modes (bench/accounting-server.ts) and what its turns measured. */
interface SharedServer {
  n: number;
  name: string;
  service: Service;
  urls: Record<Mode, string>;
  pids: number[];
  turns: Array<{ on: number; off: number; onCpuUs: number; offCpuUs: number }>;
}

/** One server process and what its throughput rounds measured. */
interface Server {
  mode: Mode;
  /** 1, 2, … within its mode. */
  n: number;
  name: string;
  service: Service;
  url: string;
  /** The server's process and its worker's. */
  pids: number[];
  rps: number[];
  cpuUs: number[];
}

export interface LoadOptions {
  processes: number;
  shared: number;
  turns: number;
  turnDurationSec: number;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  rates: number[];
  rateDurationSec: number;
  pin: boolean;
  cpuProf: boolean;
  verbose: boolean;
}

/** The load part's options for node:util parseArgs. */
export const LOAD_ARGS = {
  processes: { type: "string" },
  shared: { type: "string" },
  turns: { type: "string" },
  "turn-duration": { type: "string" },
  rounds: { type: "string" },
  duration: { type: "string" },
  warmup: { type: "string" },
  connections: { type: "string" },
  rates: { type: "string" },
  "rate-duration": { type: "string" },
  "no-pin": { type: "boolean" },
  "cpu-prof": { type: "boolean" },
  verbose: { type: "boolean" },
} as const;

type LoadValues = { [K in keyof typeof LOAD_ARGS]?: (typeof LOAD_ARGS)[K]["type"] extends "string" ? string : boolean };

/** The load part's options from parsed arguments; a bad value fails with the usage text. */
export function loadOptions(values: LoadValues, usage: string): LoadOptions {
  const option = wholeNumberOption(usage);
  const whole = (raw: string | undefined, fallback: number, name: string, min: number) => option(raw, fallback, name, { min });
  const rates = (values.rates ?? "100,5000").split(",").map((s) => Number(s.trim()));
  if (rates.length === 0 || rates.some((r) => !Number.isInteger(r) || r < 1 || r > 1_000_000)) throw new Error(`--rates must be whole req/s like 100,5000, got "${values.rates}"\n${usage}`);
  return {
    processes: whole(values.processes, 5, "processes", 1),
    shared: whole(values.shared, 6, "shared", 1),
    turns: whole(values.turns, 12, "turns", 1),
    turnDurationSec: whole(values["turn-duration"], 2, "turn-duration", 1),
    rounds: whole(values.rounds, 3, "rounds", 1),
    durationSec: whole(values.duration, 5, "duration", 1),
    warmupSec: whole(values.warmup, 2, "warmup", 0),
    connections: whole(values.connections, 32, "connections", 1),
    rates,
    rateDurationSec: whole(values["rate-duration"], 20, "rate-duration", 1),
    pin: !(values["no-pin"] ?? false),
    cpuProf: values["cpu-prof"] ?? false,
    verbose: values.verbose ?? false,
  };
}

/** What a part of a bench measured: its description and tables, targets, other figures, and failures (no figures then). */
export interface PartResult {
  text: string;
  verdicts: Array<{ target: string; measured: string; pass: boolean }>;
  informative: Array<{ target: string; measured: string }>;
  failures: string[];
}

const log = (msg: string) => console.error(`[bench] ${msg}`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/** A server's process and its worker's (the node process behind a wrapper, if any). */
const pidsOf = (service: Service) => [...new Set([service.pid, workerPid(service.pid)])];
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

/** Throughput with accounting on and off, and the database writes at fixed offered loads. */
export async function measureAccountingLoad(opts: LoadOptions): Promise<PartResult> {
  const root = process.cwd();

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

  /** A server's environment: production mode, HTTP only, on the bench's database. */
  const serverEnv = (port: number, dataDir: string, mode: Mode): NodeJS.ProcessEnv => ({
    ...process.env,
    DATABASE_URL: pg.url,
    PORT: String(port),
    HOST: "127.0.0.1",
    NODE_ENV: "production",
    APP_SECRET: pg.appSecret,
    NEXTAUTH_SECRET: nextauthSecret,
    DATA_DIR: path.join(work, dataDir),
    DEVNETS: "off",
    // HTTP only: no webhook delivery workers polling the database in the background.
    ROLE: "web",
    USAGE_METERING: mode,
    REQUEST_LOG: mode,
  });
  const ready = (service: Service, url: string) =>
    waitUntilReady(service, async () => {
      const res = await fetch(url, { method: "POST", headers, body: RPC_BODY, signal: AbortSignal.timeout(5000) });
      const body = (await res.json()) as { result?: unknown };
      return res.status === 200 && typeof body.result === "string";
    });

  // The processes serving both modes (bench/accounting-server.ts): "on" on one port, "off" on another.
  const sharedServers: SharedServer[] = [];
  for (let n = 1; n <= opts.shared; n++) {
    const [port, offPort] = [await freePort(), await freePort()];
    const name = `server (on and off, shared #${n})`;
    const service = spawnNode(name, ["bench/accounting-server.mjs"], { cwd: root, echo: opts.verbose, env: { ...serverEnv(port, `data-shared-${n}`, "on"), OFF_PORT: String(offPort) } });
    const urls = { on: `http://127.0.0.1:${port}/node/${NETWORK}`, off: `http://127.0.0.1:${offPort}/node/${NETWORK}` };
    log(`starting ${name} on ports ${port} (on) and ${offPort} (off)…`);
    await ready(service, urls.on);
    await ready(service, urls.off);
    sharedServers.push({ n, name, service, urls, pids: pidsOf(service), turns: [] });
  }

  // The servers: PROCESSES per mode, started one after the other (bin/start.mjs compiles the
  // server on first start), the modes alternating.
  const fleet: Record<Mode, Server[]> = { on: [], off: [] };
  for (let n = 1; n <= opts.processes; n++) {
    for (const mode of ["on", "off"] as const) {
      const port = await freePort();
      // Profiled: the first process of each mode.
      const profile = opts.cpuProf && n === 1 ? ["--cpu-prof", "--cpu-prof-dir", path.join(work, `profile-${mode}`), "--cpu-prof-interval", "250"] : [];
      const name = `server (${mode} #${n})`;
      const service = spawnNode(name, [...profile, "bin/start.mjs", "--api-only"], { cwd: root, echo: opts.verbose, env: serverEnv(port, `data-${mode}-${n}`, mode) });
      const url = `http://127.0.0.1:${port}/node/${NETWORK}`;
      log(`starting ${name} on port ${port}…`);
      await ready(service, url);
      fleet[mode].push({ mode, n, name, service, url, pids: pidsOf(service), rps: [], cpuUs: [] });
    }
  }
  const all = [...fleet.on, ...fleet.off];
  // The servers on CPU 0, the load generator on CPU 1 (PostgreSQL free): the load generator never
  // takes CPU time from the server it measures.
  const pinned = opts.pin && pinToCpu([...all, ...sharedServers].flatMap((s) => s.pids), 0) && pinToCpu([process.pid], 1);
  if (opts.pin && !pinned) log("could not pin the servers and the load generator to CPUs (taskset missing or one CPU): running unpinned");

  const failures: string[] = [];
  const check = (what: string, r: LoadResult) => {
    if (r.non2xx > 0 || r.errors > 0 || r.ok2xx === 0) failures.push(`${what}: ${r.non2xx} non-2xx, ${r.errors} errors, status codes ${JSON.stringify(r.statusCodes)}`);
  };

  // 1. Throughput, both modes in one process: each turn loads a process's "on" port then its
  // "off" port (the reverse every other turn), the processes one after the other.
  for (const s of sharedServers) {
    for (const mode of ["on", "off"] as const) {
      if (opts.warmupSec > 0) check(`warm-up (${s.name}, ${mode})`, await runLoad({ url: s.urls[mode], method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.warmupSec }));
    }
  }
  for (let turn = 1; turn <= opts.turns; turn++) {
    for (const s of sharedServers) {
      const got = {} as Record<Mode, { rps: number; cpuUs: number }>;
      for (const mode of turn % 2 === 1 ? (["on", "off"] as const) : (["off", "on"] as const)) {
        const stopCpu = startCpuAccounting({ server: () => s.pids });
        const r = await runLoad({ url: s.urls[mode], method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.turnDurationSec });
        check(`turn ${turn} (${s.name}, ${mode})`, r);
        got[mode] = { rps: r.rps, cpuUs: cpuPerRequest(stopCpu(), r.requests) };
      }
      s.turns.push({ on: got.on.rps, off: got.off.rps, onCpuUs: got.on.cpuUs, offCpuUs: got.off.cpuUs });
      log(`turn ${turn} ${s.name}: on ${fmt.rps(got.on.rps)} req/s, off ${fmt.rps(got.off.rps)} req/s (${fmt.ratio(got.on.rps / got.off.rps)})`);
    }
  }

  // 2. Throughput, separate processes: every process once per round, the modes alternating (on #1, off #1, on #2, …,
  // in reverse order every other round).
  const windows: Record<Mode, Array<[number, number]>> = { on: [], off: [] };
  const measured: Record<Mode, number> = { on: 0, off: 0 };
  const interleaved = fleet.on.flatMap((on, i) => [on, fleet.off[i]!]);
  if (opts.warmupSec > 0) {
    for (const s of interleaved) check(`warm-up (${s.name})`, await runLoad({ url: s.url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.warmupSec }));
  }
  for (let round = 1; round <= opts.rounds; round++) {
    for (const s of round % 2 === 1 ? interleaved : [...interleaved].reverse()) {
      const stopCpu = startCpuAccounting({ server: () => s.pids });
      const from = monotonicUs();
      const r = await runLoad({ url: s.url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.durationSec });
      if (s.n === 1) {
        windows[s.mode].push([from, monotonicUs()]);
        measured[s.mode] += r.requests;
      }
      const cpu = stopCpu();
      check(`round ${round} (${s.name})`, r);
      s.rps.push(r.rps);
      const us = cpuPerRequest(cpu, r.requests);
      if (Number.isFinite(us)) s.cpuUs.push(us);
      log(`round ${round} ${s.name}: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.latency.p50)} ms${cpu ? `, others ${fmt.cores(cpu.otherCores)} cores` : ""}`);
    }
  }
  // The database writes below are those of the first process of each mode.
  const servers = { on: fleet.on[0]!, off: fleet.off[0]! };

  // 3. Database writes of the "on" server at fixed offered loads (the "off" server stays idle):
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
      const stopCpu = startCpuAccounting({ server: () => servers.on.pids });
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
        const offCpu = startCpuAccounting({ server: () => servers.off.pids });
        const offLoad = await runLoad({ url: servers.off.url, method: "POST", headers, body: RPC_BODY, connections: opts.connections, durationSec: opts.rateDurationSec, overallRate: offered });
        check(`${label} (accounting off)`, offLoad);
        sameLoadCpu.push({ offered, on: cpuPerRequest(cpu, load.requests), off: cpuPerRequest(offCpu(), offLoad.requests) });
      }
    }
  }
  const processes = [...sharedServers, ...all];
  const died = processes.filter((s) => s.service.exited());
  for (const s of died) failures.push(`${s.service.name} exited during the load:\n${s.service.output()}`);
  for (const s of processes) await s.service.stop();
  if (opts.cpuProf) printProfiles(work, windows, measured, root);

  // Report.
  // Each process's median over the rounds; each mode's, the median of its processes'.
  const perProcess = (m: Mode, of: (s: Server) => number[]) => fleet[m].map((s) => median(of(s)));
  const modeRps = (m: Mode) => median(perProcess(m, (s) => s.rps));
  const modeCpu = (m: Mode) => median(perProcess(m, (s) => s.cpuUs));
  const medOn = modeRps("on");
  const medOff = modeRps("off");
  const separateRatio = medOn / medOff;
  const cpuCell = (us: number) => (Number.isFinite(us) ? us.toFixed(0) : "n/a");
  // Both modes in one process: the ratio of each turn, their median and quartiles.
  const turnRatios = (ts: SharedServer["turns"]) => ts.map((t) => t.on / t.off);
  const allTurns = sharedServers.flatMap((s) => s.turns);
  const ratio = median(turnRatios(allTurns));
  const spread = (ts: SharedServer["turns"]) => {
    const r = Float64Array.from(turnRatios(ts)).sort();
    return `${fmt.ratio(percentile(r, 25))}–${fmt.ratio(percentile(r, 75))}`;
  };
  const sharedRow = (label: string, ts: SharedServer["turns"]) => [
    label,
    String(ts.length),
    fmt.rps(median(ts.map((t) => t.on))),
    fmt.rps(median(ts.map((t) => t.off))),
    fmt.ratio(median(turnRatios(ts))),
    spread(ts),
    cpuCell(median(ts.map((t) => t.onCpuUs))),
    cpuCell(median(ts.map((t) => t.offCpuUs))),
  ];
  const sharedTable = markdownTable(
    ["process (on and off)", "turns", "on req/s (median)", "off req/s (median)", "on/off per turn (median)", "on/off quartiles", "on CPU µs/req", "off CPU µs/req"],
    [...sharedServers.map((s) => sharedRow(`#${s.n}`, s.turns)), sharedRow("**all turns**", allTurns)],
  );
  const throughput = markdownTable(
    ["accounting", "process", ...Array.from({ length: opts.rounds }, (_, i) => `round ${i + 1} req/s`), "median req/s", "server CPU µs/req (median)"],
    [
      ...interleaved.map((s) => [s.mode, `#${s.n}`, ...s.rps.map(fmt.rps), fmt.rps(median(s.rps)), cpuCell(median(s.cpuUs))]),
      ...(["on", "off"] as const).map((m) => {
        const r = perProcess(m, (s) => s.rps);
        return [`**${m}**`, `median of ${opts.processes} (${fmt.rps(Math.min(...r))}–${fmt.rps(Math.max(...r))})`, ...Array.from({ length: opts.rounds }, () => ""), `**${fmt.rps(modeRps(m))}**`, `**${cpuCell(modeCpu(m))}**`];
      }),
    ],
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
    { target: `throughput on/off at c=${opts.connections} ≥ ${TARGET_RATIO} (accounting costs < 10 %): both modes in one process, median of ${allTurns.length} turns`, measured: `${fmt.ratio(ratio)} (quartiles ${spread(allTurns)})`, pass: ratio >= TARGET_RATIO },
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
  const informative: Array<{ target: string; measured: string }> = [
    { target: `throughput on/off at c=${opts.connections}, separate processes: median of ${opts.processes} per mode`, measured: `${fmt.ratio(separateRatio)} (${fmt.rps(medOn)} / ${fmt.rps(medOff)} req/s)` },
  ];
  if (vLow && vHigh && vHigh !== vLow) {
    informative.push({ target: `all transactions/s with autovacuum on, ${fmt.rps(vHigh.offered)} vs ${fmt.rps(vLow.offered)} req/s`, measured: `${vHigh.commitsPerSec.toFixed(1)} vs ${vLow.commitsPerSec.toFixed(1)} (× ${fmt.ratio(vHigh.commitsPerSec / Math.max(vLow.commitsPerSec, 1e-9))}; ${vHigh.autovacuums} vs ${vLow.autovacuums} autovacuum/autoanalyze runs)` });
  }
  const cpuOn = modeCpu("on");
  const cpuOff = modeCpu("off");
  const sharedCpuOn = median(allTurns.map((t) => t.onCpuUs));
  const sharedCpuOff = median(allTurns.map((t) => t.offCpuUs));
  if (Number.isFinite(sharedCpuOn) && Number.isFinite(sharedCpuOff)) informative.push({ target: `server CPU per request, on − off, both modes in one process (c=${opts.connections}, as fast as answered)`, measured: `${(sharedCpuOn - sharedCpuOff).toFixed(1)} µs (${sharedCpuOn.toFixed(1)} vs ${sharedCpuOff.toFixed(1)})` });
  if (Number.isFinite(cpuOn) && Number.isFinite(cpuOff)) informative.push({ target: `server CPU per request, on − off, separate processes (c=${opts.connections}, as fast as answered)`, measured: `${(cpuOn - cpuOff).toFixed(0)} µs (${cpuOn.toFixed(0)} vs ${cpuOff.toFixed(0)})` });
  // At low rates the servers' timers (flushes, caches) dominate CPU per request: only the highest rate compares accounting.
  for (const c of sameLoadCpu.slice(-1)) informative.push({ target: `server CPU per request, on − off, both at ${fmt.rps(c.offered)} req/s offered`, measured: `${(c.on - c.off).toFixed(1)} µs (${c.on.toFixed(1)} vs ${c.off.toFixed(1)})` });
  const text = `- Cores: the load generator (autocannon, in the bench process), the servers and PostgreSQL share the cores${pinned ? "; the servers are pinned to CPU 0 and the load generator to CPU 1 (taskset), PostgreSQL runs where the scheduler puts it" : ", unpinned"}.
- Servers: \`node bin/start.mjs --api-only\` (NODE_ENV=production, DEVNETS=off, ROLE=web: no webhook workers polling the database) on one throwaway PostgreSQL, \`POST /node/${NETWORK}\` \`eth_chainId\` (answered from the network catalog) with the key of an ENTERPRISE project. **on**: USAGE_METERING=on and REQUEST_LOG=on, the defaults: every request is metered into the per-minute buckets and rollups, passes the CU-per-second limiter and the allowance check (the ENTERPRISE plan has neither limit, so nothing is refused: the checks take their early exit) and is appended to the request log. **off**: USAGE_METERING=off and REQUEST_LOG=off: none of that runs. Everything else (key verification, routing, JSON-RPC) is the same code.
- Throughput, the target's measurement: ${opts.shared} processes (bench/accounting-server.ts) each serve both modes, the service as \`npm start -- --api-only\` runs it with accounting on one port and a second HTTP server of the same process with accounting off on another. Each turn loads a process's "on" port then its "off" port for ${opts.turnDurationSec} s each (the reverse order every other turn), c=${opts.connections}, after a ${opts.warmupSec} s warm-up of each port; ${opts.turns} turns per process, the processes in turn. The figure is the median of the turns' on/off ratios. In a process the same heap serves both modes and the two runs of a turn are seconds apart, so the machine's swings (as much as 20 % within minutes here) cancel out. Several processes are still needed: how V8 compiles the code the two modes share differs from process to process, and the on/off ratio with it (single processes of the same code gave 0.90 to 1.03). Separate processes differ by more: identical server processes differ by up to 20 % in throughput here and keep their rank from round to round (an A/A run of four "off" processes: 0.82 to 1.00 of the fastest).
- Throughput, separate processes (for comparison): ${opts.processes} \`bin/start.mjs --api-only\` processes per mode, a ${opts.warmupSec} s warm-up each, then ${opts.rounds} rounds, each running every process for ${opts.durationSec} s (on #1, off #1, on #2, off #2, …, reversed every other round). A process's figure is its median over the rounds; a mode's is the median of its processes' (their range in brackets). Server CPU per request is the steadier comparison when the machine is busy.
- Writes: the "on" server #1 at a fixed offered load (autocannon overallRate, c=${opts.connections}) for ${opts.rateDurationSec} s each; deltas of pg_stat_database (xact_commit, which counts read-only transactions too: on the cached-key path the servers make none; tup_inserted + tup_updated + tup_deleted) and pg_stat_user_tables, read ${STATS_SETTLE_SEC} s after the previous phase and after the load (PostgreSQL reports a backend's counts within that time), divided by the load's seconds. With autovacuum off, "off" server #1 then takes the same offered load, for CPU per request at equal traffic. Usage is flushed as one statement per USAGE_FLUSH_MS for all requests. The request log holds only each project's newest 1,000 entries between flushes and writes them in one statement per flush (with the delete of the project's older rows when entries were superseded), and sweeps every 10 s: its rows inserted per second are at most 1,000 per project per flush, whatever the traffic. Counts include the servers' background work (key last-used times, sweeps). Each load runs twice: with autovacuum on, where PostgreSQL's autovacuum and autoanalyze (their own transactions, triggered by the rows written and deleted) fall in the same window and count in transactions/s (their runs are shown), then with autovacuum off for the throwaway database's tables (\`ALTER TABLE … SET (autovacuum_enabled = false)\` on every table of the schema), where the transactions counted are the servers' alone; the flatness target reads the second.

${sharedTable}

${throughput}

${writes}`;
  return { text, verdicts, informative, failures };
}
