import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations } from "@/lib/db/migrate";
import { freePort } from "./ports";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The same server as its superuser: for a test that needs a database of its own (CREATE DATABASE). */
    databaseSuperuserUrl: string;
  }
}

/** One real, throwaway PostgreSQL for the whole run; every test makes its own users and projects. */
export default async function setup(project: TestProject) {
  // Test processes inherit these: configuration read before a suite connects (lib/env.ts
  // generates missing secrets into DATA_DIR) never writes into the working copy.
  const testDataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-test-data-"));
  process.env.DATA_DIR = testDataDir;
  process.env.APP_SECRET ??= randomBytes(32).toString("base64url");
  process.env.NEXTAUTH_SECRET ??= randomBytes(32).toString("base64url");
  process.env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-test-pg-"));
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
  await applyMigrations(pg.url);
  project.provide("databaseUrl", pg.url);
  project.provide("databaseSuperuserUrl", pg.superuserUrl);
  return async () => {
    await pg.stop();
    await rm(testDataDir, { recursive: true, force: true });
  };
}
