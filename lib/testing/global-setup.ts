import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations } from "@/lib/db/migrate";
import { freePort } from "./ports";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** One real, throwaway PostgreSQL for the whole run; every test makes its own users and projects. */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-test-pg-"));
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
  await applyMigrations(pg.url);
  project.provide("databaseUrl", pg.url);
  return async () => {
    await pg.stop();
  };
}
