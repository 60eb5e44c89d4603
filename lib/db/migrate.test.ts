import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/lib/testing/ports";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embedded";
import { applyMigrations, createMigration, diffMigrationsToSchema, listMigrations, migrationStatus } from "./migrate";

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("migrations on a fresh embedded PostgreSQL", () => {
  let server: EmbeddedPostgresHandle;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = path.join(os.tmpdir(), `blockgate-migrate-test-${process.pid}-${Date.now()}`);
    server = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("applies every migration to an empty database", async () => {
    const migrations = await listMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(await applyMigrations(server.url)).toEqual(migrations);

    const tables = await query<{ table_name: string }>(
      server.url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(["users", "projects", "api_keys", "usage_buckets"]));
  });

  it("applies nothing the second time, with one history row per migration", async () => {
    expect(await applyMigrations(server.url)).toEqual([]);

    const rows = await query<{ migration_name: string; finished_at: Date | null }>(
      server.url,
      "SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name",
    );
    expect(rows.map((r) => r.migration_name)).toEqual(await listMigrations());
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);

    const status = await migrationStatus(server.url);
    expect(status).toMatchObject({ upToDate: true, pending: [], failed: [], edited: [], unknown: [] });
  });

  // Diffs replay the migrations in shadow databases, which takes CREATEDB: the app role may not.
  it("schema.prisma and migrations agree", async () => {
    expect(await diffMigrationsToSchema(server.superuserUrl)).toBe("");
  });

  it("creates a migration from a schema change, which then applies", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-migrate-root-"));
    try {
      await fs.cp(path.resolve("prisma"), path.join(root, "prisma"), { recursive: true });
      expect(await createMigration(server.superuserUrl, "nothing", { root })).toBeNull();

      const schemaFile = path.join(root, "prisma", "schema.prisma");
      await fs.appendFile(schemaFile, '\nmodel Webhook {\n  id  String @id\n  url String\n\n  @@map("webhooks")\n}\n');
      expect(await diffMigrationsToSchema(server.superuserUrl, { root })).toContain('CREATE TABLE "webhooks"');

      const created = await createMigration(server.superuserUrl, "Add webhooks", { root });
      expect(created).toMatch(/^\d{14}_add_webhooks$/);
      expect(await diffMigrationsToSchema(server.superuserUrl, { root })).toBe("");
      expect((await migrationStatus(server.url, { root })).pending).toEqual([created]);

      expect(await applyMigrations(server.url, { root })).toEqual([created]);
      const tables = await query(server.url, "SELECT 1 FROM information_schema.tables WHERE table_name = 'webhooks'");
      expect(tables).toHaveLength(1);
      // The real migrations folder now lags behind this database.
      expect((await migrationStatus(server.url)).unknown).toEqual([created]);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it("runs a migration's script as one query, as `prisma migrate deploy` does: semicolons in a function body and in comments, all of it or none", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-migrate-script-"));
    const url = new URL(server.superuserUrl);
    url.pathname = "/script_test";
    const write = (name: string, sql: string) =>
      fs.mkdir(path.join(root, "prisma", "migrations", name), { recursive: true }).then(() => fs.writeFile(path.join(root, "prisma", "migrations", name, "migration.sql"), sql));
    try {
      await query(server.superuserUrl, "CREATE DATABASE script_test");
      await write(
        "20000101000000_trigger",
        `-- A comment; with a semicolon.
CREATE TABLE t (n int, doubled int);
CREATE FUNCTION t_doubled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.doubled := NEW.n * 2;
  RETURN NEW;
END
$$;
CREATE TRIGGER t_doubled BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION t_doubled();
`,
      );
      expect(await applyMigrations(url.toString(), { root })).toEqual(["20000101000000_trigger"]);
      await query(url.toString(), "INSERT INTO t (n) VALUES (21)");
      expect(await query(url.toString(), "SELECT doubled FROM t")).toEqual([{ doubled: 42 }]);

      await write("20000102000000_broken", "CREATE TABLE first_half (n int);\nSELECT 1 / 0;\n");
      await expect(applyMigrations(url.toString(), { root })).rejects.toThrow(/division by zero/);
      expect(await query(url.toString(), "SELECT to_regclass('first_half') AS t")).toEqual([{ t: null }]);
    } finally {
      await query(server.superuserUrl, "DROP DATABASE IF EXISTS script_test WITH (FORCE)");
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it("drops its shadow databases", async () => {
    const shadows = await query(server.url, "SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'");
    expect(shadows).toEqual([]);
  });

  it("stops the cluster", async () => {
    await server.stop();
    await expect(query(server.url, "SELECT 1")).rejects.toThrow();
    expect(existsSync(server.dataDir)).toBe(false);
  });
});

describe("upgrading a populated consensus index (20261122051127_consensus_ingest)", () => {
  const INGEST = "20261122051127_consensus_ingest";
  let server: EmbeddedPostgresHandle;
  let root: string;

  beforeAll(async () => {
    server = await startEmbeddedPostgres({ dataDir: path.join(os.tmpdir(), `blockgate-upgrade-test-${process.pid}-${Date.now()}`), port: await freePort(), persistent: false });
    // The project as it was before that migration.
    root = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-upgrade-root-"));
    await fs.cp(path.resolve("prisma"), path.join(root, "prisma"), { recursive: true });
    const later = (await listMigrations()).filter((m) => m >= INGEST);
    for (const m of later) await fs.rm(path.join(root, "prisma", "migrations", m), { recursive: true });
    await applyMigrations(server.url, { root });
  });

  afterAll(async () => {
    await server?.stop();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it("keeps every attribute in its order and backfills the counters from them", async () => {
    // Two txs at height 1 (the second holds transfer.amount twice), one at height 2; attributes
    // inserted out of order: their ids give the order within a tx.
    await query(
      server.url,
      `INSERT INTO consensus_tx_attrs (id, network, height, tx_index, key, value, num, time) VALUES
         (10, 'n', 1, 0, 'transfer.sender', 'alice', NULL, NULL),
         (11, 'n', 1, 0, 'transfer.amount', '5ubbn', 5, NULL),
         (12, 'n', 1, 1, 'transfer.amount', '7ubbn', 7, NULL),
         (13, 'n', 1, 1, 'transfer.amount', '9ubbn', 9, NULL),
         (5,  'n', 1, 1, 'transfer.sender', 'alice', NULL, NULL),
         (14, 'n', 2, 0, 'transfer.sender', 'bob', NULL, NULL),
         (15, 'other', 1, 0, 'transfer.sender', 'alice', NULL, NULL);
       INSERT INTO consensus_block_attrs (id, network, height, key, value, num, time) VALUES
         (3, 'n', 1, 'mint.amount', '10ubbn', 10, NULL), (1, 'n', 1, 'proposer.address', 'AB', NULL, NULL)`,
    );
    await fs.cp(path.resolve("prisma", "migrations", INGEST), path.join(root, "prisma", "migrations", INGEST), { recursive: true });
    expect(await applyMigrations(server.url, { root })).toEqual([INGEST]);

    const attrs = await query<{ height: string; tx_index: number; ord: number; key: string; value: string }>(
      server.url,
      "SELECT height, tx_index, ord, key, value FROM consensus_tx_attrs WHERE network = 'n' ORDER BY height, tx_index, ord",
    );
    expect(attrs.map((a) => `${a.height}:${a.tx_index}:${a.ord} ${a.key}=${a.value}`)).toEqual([
      "1:0:0 transfer.sender=alice",
      "1:0:1 transfer.amount=5ubbn",
      "1:1:0 transfer.sender=alice",
      "1:1:1 transfer.amount=7ubbn",
      "1:1:2 transfer.amount=9ubbn",
      "2:0:0 transfer.sender=bob",
    ]);
    const blockAttrs = await query<{ ord: number; key: string }>(server.url, "SELECT ord, key FROM consensus_block_attrs ORDER BY ord");
    expect(blockAttrs).toEqual([
      { ord: 0, key: "proposer.address" },
      { ord: 1, key: "mint.amount" },
    ]);
    const keys = await query<{ network: string; key: string; txs: string; multi_txs: string }>(server.url, "SELECT * FROM consensus_attr_keys ORDER BY network, key");
    expect(keys).toEqual([
      { network: "n", key: "transfer.amount", txs: "2", multi_txs: "1" },
      { network: "n", key: "transfer.sender", txs: "3", multi_txs: "0" },
      { network: "other", key: "transfer.sender", txs: "1", multi_txs: "0" },
    ]);
    const values = await query<{ key: string; value: string; num: string | null; txs: string }>(
      server.url,
      "SELECT key, value, num::text AS num, txs FROM consensus_attr_values WHERE network = 'n' ORDER BY key, value",
    );
    expect(values).toEqual([
      { key: "transfer.amount", value: "5ubbn", num: "5.000000000000000000000000000000", txs: "1" },
      { key: "transfer.amount", value: "7ubbn", num: "7.000000000000000000000000000000", txs: "1" },
      { key: "transfer.amount", value: "9ubbn", num: "9.000000000000000000000000000000", txs: "1" },
      { key: "transfer.sender", value: "alice", num: null, txs: "2" },
      { key: "transfer.sender", value: "bob", num: null, txs: "1" },
    ]);
    // The migrations after this one apply on top of it, and together they give the schema.
    await fs.cp(path.resolve("prisma", "migrations"), path.join(root, "prisma", "migrations"), { recursive: true });
    await applyMigrations(server.url, { root });
    expect(await diffMigrationsToSchema(server.superuserUrl, { root })).toBe("");
  });
});
