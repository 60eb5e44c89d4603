/**
 * Shared helpers for `npm run bench -- <name>`: cleanup on failure and Ctrl-C, child processes,
 * load generation (autocannon) with sub-millisecond latency percentiles, /proc memory samples,
 * CPU profile summaries and bench/RESULTS.md.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations } from "@/lib/db/migrate";
import { freePort } from "@/lib/testing/ports";

export const RESULTS_FILE = path.join("bench", "RESULTS.md");

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function errorText(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

// ---------------------------------------------------------------------------------------------
// Cleanup: a stack of undo steps, run in reverse order on success, failure, SIGINT or SIGTERM.

type CleanupStep = { name: string; fn: () => Promise<void> | void };

class CleanupStack {
  private steps: CleanupStep[] = [];
  private running: Promise<void> | undefined;

  /** Registers an undo step; returns a function that unregisters it (when it was done by hand). */
  add(name: string, fn: () => Promise<void> | void): () => void {
    const step = { name, fn };
    this.steps.push(step);
    return () => {
      this.steps = this.steps.filter((s) => s !== step);
    };
  }

  /** Runs every registered step, newest first; a failing step does not stop the others. */
  run(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        try {
          await step.fn();
        } catch (e) {
          console.error(`[bench] cleanup "${step.name}" failed: ${errorText(e)}`);
        }
      }
    })();
    return this.running;
  }
}

export const cleanup = new CleanupStack();

/** Spawned process groups still alive: killed synchronously if the bench process exits anyway. */
const liveGroups = new Set<number>();

process.on("exit", () => {
  for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
});

function killGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a benchmark with cleanup guaranteed: on return, on throw, and on SIGINT/SIGTERM (the
 * first signal cleans up and exits; a signal arriving more than 2 s later forces the exit, so a
 * relayed duplicate of the same Ctrl-C does not cut the cleanup short).
 */
export async function runWithCleanup(main: () => Promise<number>): Promise<never> {
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = signal === "SIGINT" ? 130 : 143;
    if (firstSignalAt === 0) {
      firstSignalAt = Date.now();
      console.error(`\n[bench] ${signal}: cleaning up…`);
      void cleanup.run().finally(() => process.exit(code));
    } else if (Date.now() - firstSignalAt > 2000) {
      console.error(`[bench] ${signal} again: exiting without waiting for the cleanup`);
      process.exit(code);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let code = 1;
  try {
    code = await main();
  } catch (e) {
    console.error(`[bench] failed: ${errorText(e)}`);
    code = 1;
  }
  await cleanup.run();
  process.exit(code);
}

/** A fresh temporary directory, removed by the cleanup. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanup.add(`remove ${dir}`, () => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Child processes

export interface Service {
  name: string;
  /** The spawned process (also the id of its process group). */
  pid: number;
  child: ChildProcess;
  /** Last lines of its stdout and stderr, for error messages. */
  output(): string;
  exited(): boolean;
  /** SIGTERM to the spawned process, SIGKILL to its whole group after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node <args>` in its own process group (so a Ctrl-C in the terminal reaches only the
 * bench, which stops the services in order), registered with the cleanup.
 */
export function spawnNode(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; echo?: boolean }): Service {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = child.pid;
  liveGroups.add(pid);
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > 80) lines.shift();
      if (opts.echo) process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
    child.once("error", (e) => {
      lines.push(`spawn error: ${e.message}`);
      exited = true;
      resolve();
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 15_000) =>
    (stopping ??= (async () => {
      if (!exited) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
        const timer = sleep(graceMs).then(() => "timeout" as const);
        if ((await Promise.race([exit.then(() => "exited" as const), timer])) === "timeout") {
          console.error(`[bench] ${name} did not stop within ${graceMs / 1000} s; killing it`);
        }
      }
      // Whatever is left of the group (e.g. the script under a tsx wrapper).
      killGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
    })());
  const unregister = cleanup.add(`stop ${name}`, () => stop());
  void exit.then(() => {
    // Keep the cleanup step only while something of the group may still run.
    if (!groupAlive(pid)) {
      liveGroups.delete(pid);
      unregister();
    }
  });
  return { name, pid, child, output: () => lines.join("\n"), exited: () => exited, stop };
}

function groupAlive(pgid: number): boolean {
  return killGroup(pgid, 0);
}

/** Polls `probe` until it returns true; fails early when the service exits. */
export async function waitUntilReady(service: Service, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.exited()) throw new Error(`${service.name} exited before it was ready:\n${service.output()}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${service.name} was not ready within ${timeoutMs / 1000} s:\n${service.output()}`);
    await sleep(100);
  }
}

/** Parent → children, from one scan of /proc (Linux; empty elsewhere). */
function processTree(): Map<number, number[]> {
  const tree = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return tree;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may contain spaces, so split after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = tree.get(ppid);
      if (list) list.push(Number(entry));
      else tree.set(ppid, [Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  return tree;
}

/** A process and all its descendants. */
export function processAndDescendants(pid: number): number[] {
  const tree = processTree();
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop()!;
    out.push(p);
    todo.push(...(tree.get(p) ?? []));
  }
  return out;
}

function isNode(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return argv0 === process.execPath || path.basename(argv0) === "node";
  } catch {
    return false;
  }
}

/**
 * The Node process doing the work behind `pid`: the tsx CLI runs the script in a child Node
 * process, so follow a single Node child down (other children, like esbuild's, don't count).
 */
export function workerPid(pid: number): number {
  let current = pid;
  for (let depth = 0; depth < 3; depth++) {
    const children = (processTree().get(current) ?? []).filter(isNode);
    if (children.length !== 1) break;
    current = children[0]!;
  }
  return current;
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): who used the cores during a run.

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function systemTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu user nice system idle iowait irq softirq steal (guest time is already in user)
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

/** [user, system] clock ticks of a process (all its threads). */
function processTicks(pid: number): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14 and 15 (utime, stime); f[0] is field 3 (state)
    return [Number(f[11]) || 0, Number(f[12]) || 0];
  } catch {
    return [0, 0];
  }
}

export interface CpuUsage {
  wallSec: number;
  /** Cores busy on the whole machine (average over the run). */
  systemCores: number;
  /** Cores used by each named group of processes (user + system). */
  groups: Record<string, number>;
  /** The system (kernel) part of `groups`. */
  groupsSystem: Record<string, number>;
  /** Cores used by processes outside this bench (other users of the machine): noise. */
  otherCores: number;
}

/**
 * Starts counting CPU time; the returned function stops and reports it. `groups` name sets of
 * pids (looked up at both ends); everything descending from the bench process counts as ours,
 * the rest of the machine's busy time as "other". Undefined when /proc is not available.
 */
export function startCpuAccounting(groups: Record<string, () => number[]>): () => CpuUsage | undefined {
  const ours = () => processAndDescendants(process.pid);
  const snapshot = () => {
    const pids = new Set<number>(ours());
    const named = Object.fromEntries(Object.entries(groups).map(([name, get]) => [name, get()]));
    for (const list of Object.values(named)) for (const p of list) pids.add(p);
    const ticks = new Map<number, [number, number]>();
    for (const p of pids) ticks.set(p, processTicks(p));
    return { at: performance.now(), system: systemTicks(), ticks, named };
  };
  const before = snapshot();
  return () => {
    const after = snapshot();
    if (!before.system || !after.system) return undefined;
    const hz = ticksPerSecond();
    const wallSec = (after.at - before.at) / 1000;
    // A process born during the run counts from zero; one that ended is lost (both rare here).
    const used = (pid: number, part?: 0 | 1) => {
      const a = after.ticks.get(pid) ?? [0, 0];
      const b = before.ticks.get(pid) ?? [0, 0];
      return part === undefined ? Math.max(0, a[0] + a[1] - b[0] - b[1]) : Math.max(0, a[part] - b[part]);
    };
    const cores = (ticks: number) => ticks / hz / wallSec;
    const groupCores: Record<string, number> = {};
    const groupsSystem: Record<string, number> = {};
    for (const [name, pids] of Object.entries(after.named)) {
      groupCores[name] = cores(pids.reduce((sum, p) => sum + used(p), 0));
      groupsSystem[name] = cores(pids.reduce((sum, p) => sum + used(p, 1), 0));
    }
    const oursTicks = [...after.ticks.keys()].reduce((sum, p) => sum + used(p), 0);
    const systemBusy = after.system.busy - before.system.busy;
    return {
      wallSec,
      systemCores: cores(systemBusy),
      groups: groupCores,
      groupsSystem,
      otherCores: Math.max(0, cores(systemBusy - oursTicks)),
    };
  };
}

export interface Memory {
  /** Resident set size now, MiB. */
  rssMiB: number;
  /** Peak resident set size, MiB. */
  hwmMiB: number;
}

/** VmRSS and VmHWM from /proc/<pid>/status; undefined when not available (not Linux, gone). */
export function memoryOf(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? NaN);
    const rss = kb("VmRSS");
    if (!Number.isFinite(rss)) return undefined;
    return { rssMiB: rss / 1024, hwmMiB: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * On a shared machine, waits (up to `maxWaitSec`) until processes outside this bench use less
 * than `maxOtherCores` over a 1 s window. Returns the last reading (cores used by others).
 */
export async function waitForQuiet(maxOtherCores: number, maxWaitSec: number, onWait?: (others: number) => void): Promise<number | undefined> {
  const deadline = Date.now() + maxWaitSec * 1000;
  let waited = false;
  for (;;) {
    const stop = startCpuAccounting({});
    await sleep(1000);
    const others = stop()?.otherCores;
    if (others === undefined || others < maxOtherCores || Date.now() >= deadline) return others;
    if (!waited) onWait?.(others);
    waited = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Load generation

export interface LoadOptions {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationSec: number;
}

export interface LoadResult {
  connections: number;
  durationSec: number;
  /** Mean of autocannon's per-second request counts. */
  rps: number;
  /** Completed requests / elapsed seconds (a cross-check of rps). */
  rpsOverall: number;
  requests: number;
  ok2xx: number;
  non2xx: number;
  /** Connection errors, including timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Latency of 2xx responses in ms, from per-response timings (autocannon's own histogram has 1 ms resolution). */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Growable array of doubles (a 10 s run can record a few hundred thousand latencies). */
class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/**
 * One autocannon run in this process (keep-alive connections, pipelining 1). Latency percentiles
 * come from the `response` event's per-request timing in ms (hrtime), because autocannon's
 * histogram stores whole milliseconds, too coarse for sub-millisecond servers.
 */
export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  return new Promise<LoadResult>((resolve, reject) => {
    const latencies = new Samples();
    let unregister = () => {};
    const instance = autocannon(
      {
        url: opts.url,
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.durationSec,
        timeout: 10,
      },
      (err: unknown, result: autocannon.Result) => {
        unregister();
        if (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        const sorted = latencies.sorted();
        let sum = 0;
        for (const v of sorted) sum += v;
        const statusCodes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
        const elapsedSec = (result.finish.getTime() - result.start.getTime()) / 1000;
        resolve({
          connections: opts.connections,
          durationSec: opts.durationSec,
          rps: result.requests.average,
          rpsOverall: elapsedSec > 0 ? result.requests.total / elapsedSec : 0,
          requests: result.requests.total,
          ok2xx: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes,
          latency: {
            mean: sorted.length > 0 ? sum / sorted.length : NaN,
            p50: percentile(sorted, 50),
            p90: percentile(sorted, 90),
            p99: percentile(sorted, 99),
            max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
          },
        });
      },
    );
    unregister = cleanup.add("stop autocannon", () => instance.stop());
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Reporting

export function machineInfo(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? "unknown CPU";
  const memGiB = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `${model}, ${cpus.length} cores, ${memGiB} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()} ${os.arch()}`;
}

/**
 * Which code was measured: the git commit (if any; "+ changes" when the tree is dirty) and a
 * short hash of the given source files or directories, which tells runs of an uncommitted tree apart.
 */
export function codeVersion(paths: string[], root = process.cwd()): string {
  const files: string[] = [];
  const walk = (p: string) => {
    const full = path.join(root, p);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) for (const e of readdirSync(full).sort()) walk(path.join(p, e));
    else if (/\.[cm]?[jt]sx?$/.test(p) && !/\.test\.[jt]sx?$/.test(p)) files.push(p);
  };
  for (const p of paths) walk(p);
  const hash = createHash("sha256");
  for (const f of files) hash.update(f).update("\0").update(readFileSync(path.join(root, f))).update("\0");
  let git = "no git commit";
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() !== "";
    git = `git ${head}${dirty ? " + changes" : ""}`;
  } catch {
    // not a repository, or no commit yet
  }
  return `${git}; sources ${paths.join(", ")} sha256 ${hash.digest("hex").slice(0, 12)}`;
}

export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export const fmt = {
  ms: (v: number) => (Number.isFinite(v) ? v.toFixed(3) : "n/a"),
  rps: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a"),
  ratio: (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "n/a"),
  cores: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : "n/a"),
  mib: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${v.toFixed(1)} MiB` : "n/a"),
};

const RESULTS_HEADER = `# Benchmark results

Written by \`npm run bench -- <name>\` (bench/run.ts); one section per run, newest first.
`;

/** Puts a section ("## ..." and its body) above the earlier ones in bench/RESULTS.md. */
export async function prependResultsSection(section: string, file = RESULTS_FILE): Promise<void> {
  const existing = existsSync(file) ? await fs.readFile(file, "utf8") : RESULTS_HEADER;
  const at = existing.search(/^## /m);
  const head = (at === -1 ? existing : existing.slice(0, at)).trimEnd();
  const rest = at === -1 ? "" : existing.slice(at).trimEnd();
  const text = `${head}\n\n${section.trim()}\n${rest ? `\n${rest}\n` : ""}`;
  await fs.writeFile(file, text, "utf8");
}

// ---------------------------------------------------------------------------------------------
// CPU profiles (.cpuprofile written by node --cpu-prof)

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs, CLOCK_MONOTONIC on Linux (the clock of process.hrtime), like the sample times. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Now in µs of the monotonic clock that V8 stamps profile samples with (Linux). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface ProfileFunction {
  /** "name origin:line" */
  name: string;
  /** Project file, node_modules package, "node internals", "(garbage collector)", ... */
  origin: string;
  selfMs: number;
  /** Time with this function anywhere on the stack. */
  totalMs: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  /** Every function seen, busiest first by self time. */
  functions: ProfileFunction[];
  /** Self time by origin, busiest first. */
  origins: { origin: string; selfMs: number }[];
}

function originOf(url: string, name: string, root: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const file = url.replace(/^file:\/\//, "");
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (nm) return `node_modules/${nm[1]}`;
  return file.startsWith(root) ? path.relative(root, file) : file;
}

/**
 * Self and inclusive time per function and self time per origin, from a .cpuprofile file;
 * only the samples inside `windows` ([start, end] in monotonicUs()) when given.
 */
export function summarizeCpuProfile(file: string, root = process.cwd(), windows?: Array<[number, number]>): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const functions = new Map<string, ProfileFunction>();
  const fnOf = (n: ProfileNode): ProfileFunction => {
    const { functionName, url, lineNumber } = n.callFrame;
    const origin = originOf(url, functionName, root);
    // Files run through tsx are transpiled: their line numbers don't match the source, so leave them out.
    const line = /\.[cm]?tsx?$/.test(origin) ? "" : `:${lineNumber + 1}`;
    const name = `${functionName || "(anonymous)"}${url ? ` ${origin}${line}` : ""}`;
    let f = functions.get(name);
    if (!f) {
      f = { name, origin, selfMs: 0, totalMs: 0 };
      functions.set(name, f);
    }
    return f;
  };
  let totalUs = 0;
  let idleUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (!node) continue;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    totalUs += dt;
    if (node.callFrame.functionName === "(idle)") {
      idleUs += dt;
      continue;
    }
    fnOf(node).selfMs += dt / 1000;
    const seen = new Set<ProfileFunction>();
    for (let cur: number | undefined = node.id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n) break;
      const f = fnOf(n);
      if (seen.has(f)) continue; // recursion: count once
      seen.add(f);
      f.totalMs += dt / 1000;
    }
  }
  const origins = new Map<string, number>();
  for (const f of functions.values()) origins.set(f.origin, (origins.get(f.origin) ?? 0) + f.selfMs);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    functions: [...functions.values()].sort((a, b) => b.selfMs - a.selfMs),
    origins: [...origins.entries()].map(([origin, selfMs]) => ({ origin, selfMs })).sort((a, b) => b.selfMs - a.selfMs),
  };
}

/** True for functions defined in the project's own files (not node_modules, not Node's). */
export function isProjectFunction(f: ProfileFunction): boolean {
  return /\.(?:[cm]?[jt]sx?)$/.test(f.origin) && !f.origin.startsWith("/") && !f.origin.startsWith("node_modules/");
}

/** 32 random bytes, base64url: secrets for the servers a bench starts. */
export const secret = (): string => randomBytes(32).toString("base64url");

/**
 * A throwaway embedded PostgreSQL with the migrations applied, stopped by the cleanup stack; this
 * process's DATABASE_URL and APP_SECRET point at it (APP_SECRET encrypts the keys a bench creates).
 */
export async function throwawayDatabase(prefix: string): Promise<{ url: string; appSecret: string }> {
  const pgDir = await tempDir(`${prefix}pg-`);
  console.error("[bench] starting a throwaway PostgreSQL…");
  const pgStart = startEmbeddedPostgres({ dataDir: pgDir, port: await freePort(), persistent: false });
  cleanup.add("stop PostgreSQL", async () => {
    const handle = await pgStart.catch(() => undefined);
    await handle?.stop();
  });
  const pg = await pgStart;
  await applyMigrations(pg.url);
  const appSecret = secret();
  process.env.DATABASE_URL = pg.url;
  process.env.APP_SECRET = appSecret;
  return { url: pg.url, appSecret };
}
