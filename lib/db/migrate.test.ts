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

  it("schema.prisma and migrations agree", async () => {
    expect(await diffMigrationsToSchema(server.url)).toBe("");
  });

  it("creates a migration from a schema change, which then applies", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-migrate-root-"));
    try {
      await fs.cp(path.resolve("prisma"), path.join(root, "prisma"), { recursive: true });
      expect(await createMigration(server.url, "nothing", { root })).toBeNull();

      const schemaFile = path.join(root, "prisma", "schema.prisma");
      await fs.appendFile(schemaFile, '\nmodel Webhook {\n  id  String @id\n  url String\n\n  @@map("webhooks")\n}\n');
      expect(await diffMigrationsToSchema(server.url, { root })).toContain('CREATE TABLE "webhooks"');

      const created = await createMigration(server.url, "Add webhooks", { root });
      expect(created).toMatch(/^\d{14}_add_webhooks$/);
      expect(await diffMigrationsToSchema(server.url, { root })).toBe("");
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
