// The real service for fault tests: `bin/start.mjs --api-only` (or `npm start`'s whole service) in a
// child process with a throwaway DATA_DIR (its own embedded PostgreSQL and devnets, unless the
// environment names a DATABASE_URL) and free ports, its log lines parsed, plus what the tests need
// around it: the admin CLI, the database's rows, and the machine's processes.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freeLowPort, freePort } from "@/lib/testing/ports";

// Vitest and Playwright both run from the repository root (Playwright loads this file as CommonJS, where import.meta is not allowed).
const root = process.cwd();

export interface LogLine {
  level: number;
  /** When it was written, in ms since the epoch (pino's own field). */
  time: number;
  msg: string;
  component?: string;
  err?: unknown;
  [field: string]: unknown;
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** Where it serves HTTP (a ROLE=worker process does not: its probes answer at WORKER_HTTP_PORT, when set). */
  url: string;
  dataDir: string;
  env: Record<string, string>;
  /** pino lines written so far (live). */
  logs: LogLine[];
  /** Every line of output so far, stdout and stderr (live). */
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A fresh data directory every user can traverse (PostgreSQL runs as `postgres` when we are root). */
export function scratchDataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "blockgate-fault-"));
  chmodSync(dir, 0o755);
  return dir;
}

/**
 * Starts the service on `dataDir` (the public API only, unless `withConsole`) and resolves once it
 * serves requests, or, with ROLE=worker in `extraEnv`, once its background work has started.
 */
export async function startService(dataDir: string, extraEnv: Record<string, string> = {}, { withConsole = false } = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("UPSTREAM_")) env[k] = v;
  Object.assign(env, {
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    HOST: "127.0.0.1",
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: "",
    EMBEDDED_PG_PORT: String(await freeLowPort()),
    NEXT_TELEMETRY_DISABLED: "1",
    ...extraEnv,
  });
  const child = spawn(process.execPath, ["--enable-source-maps", "bin/start.mjs", ...(withConsole ? [] : ["--api-only"])], { cwd: root, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
  const logs: LogLine[] = [];
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let ready: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (ready = resolve));
  const read = (stream: NodeJS.ReadableStream) => {
    let rest = "";
    stream.on("data", (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        output.push(line);
        if (line.startsWith("{")) {
          try {
            logs.push(JSON.parse(line) as LogLine);
          } catch {
            // not a log line
          }
        }
        if (/Blockgate (worker )?is running/.test(line)) ready();
      }
    });
  };
  read(child.stdout!);
  read(child.stderr!);
  const outcome = await Promise.race([running.then(() => "running" as const), exited.then(() => "exited" as const)]);
  if (outcome === "exited") throw new Error(`the service did not start:\n${output.slice(-40).join("\n")}`);
  return { child, pid: child.pid!, url: `http://127.0.0.1:${port}`, dataDir, env, logs, output, exited };
}

/** The service's last lines of output, on stderr: what a failed fault test needs to be understood. */
export function printOutput(service: ServiceProcess | undefined, lines = 80): void {
  if (service) process.stderr.write(`--- the service's last ${lines} lines of output ---\n${service.output.slice(-lines).join("\n")}\n`);
}

/** Throws when the service has exited (a crash makes waits time out otherwise, with less to say). */
export function assertRunning(service: ServiceProcess): void {
  if (service.child.exitCode !== null || service.child.signalCode !== null) {
    throw new Error(`the service exited (${service.child.exitCode ?? service.child.signalCode}):\n${service.output.slice(-30).join("\n")}`);
  }
}

/** Runs the admin CLI against the service's database (as an operator would while it runs); its JSON answer. */
export function admin(service: ServiceProcess, ...args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bin/admin.ts", ...args], { cwd: root, env: { ...service.env, LOG_LEVEL: "warn" } as Record<string, string> as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`admin ${args[0]} failed (${code}): ${err}`))));
  });
}

/** A user with one project on `plan` (default Enterprise: no throughput limit, so load is never refused), and its key. */
export async function projectOnPlan(service: ServiceProcess, plan = "ENTERPRISE"): Promise<{ projectId: string; apiKey: string }> {
  const email = `fault-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  await admin(service, "create-user", "--email", email, "--password", "correct horse battery");
  const project = (await admin(service, "create-project", "--email", email, "--name", "Faults")) as { projectId: string; apiKey: string };
  await admin(service, "set-plan", "--project", project.projectId, "--plan", plan);
  return project;
}

/** The app's connection URL of the service's embedded cluster (its password is kept in DATA_DIR/postgres.json). */
export function databaseUrlOf(service: { dataDir: string; env: { EMBEDDED_PG_PORT?: string } }): string {
  const { appPassword } = JSON.parse(readFileSync(path.join(service.dataDir, "postgres.json"), "utf8")) as { appPassword: string };
  return `postgresql://blockgate:${appPassword}@127.0.0.1:${service.env.EMBEDDED_PG_PORT}/blockgate`;
}

export interface StoredUsage {
  requests: number;
  errors: number;
  cu: number;
}

/** The usage of a project as stored in usage_buckets. */
export async function storedUsage(databaseUrl: string, projectId: string): Promise<StoredUsage> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ requests: string | null; errors: string | null; cu: string | null }>(
      "SELECT sum(requests) AS requests, sum(errors) AS errors, sum(cu) AS cu FROM usage_buckets WHERE project_id = $1",
      [projectId],
    );
    return { requests: Number(rows[0]?.requests ?? 0), errors: Number(rows[0]?.errors ?? 0), cu: Number(rows[0]?.cu ?? 0) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The pid of the postmaster serving the cluster under `dataDir` (from its postmaster.pid). */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
}

interface ProcessEntry {
  pid: number;
  ppid: number;
  state: string;
  command: string;
}

function processes(): ProcessEntry[] {
  const list: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      list.push({ pid: Number(name), ppid: Number(fields[1]), state: fields[0] ?? "", command });
    } catch {
      // gone meanwhile
    }
  }
  return list;
}

/** Live (not zombie) processes below `pid`, however deep, with their command lines. */
export function descendants(pid: number): ProcessEntry[] {
  const all = processes();
  const found: ProcessEntry[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        if (p.state !== "Z") found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/** Which of `pids` still run (zombies count as gone: they only wait for a parent to read their status). */
export function stillRunning(pids: readonly number[]): ProcessEntry[] {
  const wanted = new Set(pids);
  return processes().filter((p) => wanted.has(p.pid) && p.state !== "Z");
}

/** Live processes whose command line mentions `text` (a data directory: postmaster -D, anvil --state). */
export function processesMentioning(text: string): ProcessEntry[] {
  return processes().filter((p) => p.state !== "Z" && p.pid !== process.pid && p.command.includes(text));
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
