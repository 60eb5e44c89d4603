import type { LimitsMode } from "@/lib/limits/shared";
import { db } from "./client";

// The migrations this build expects, recorded by the launcher at start-up (it has just read the
// migrations folder), so the readiness check needs no file access from inside the Next.js bundle;
// and how the process's limits count (lib/limits/shared.ts), recorded by the launcher as it changes.
const g = globalThis as unknown as { __blockgateExpectedMigrations?: readonly string[]; __blockgateLimitsMode?: LimitsMode };

export function setExpectedMigrations(names: readonly string[]): void {
  g.__blockgateExpectedMigrations = names;
}

export function setLimitsMode(mode: LimitsMode): void {
  g.__blockgateLimitsMode = mode;
}

/** Whether limits are shared through Redis or each process enforces its share (local until the launcher says otherwise). */
export function limitsMode(): LimitsMode {
  return g.__blockgateLimitsMode ?? "local";
}

export type Readiness = { ready: true } | { ready: false; reason: string };

/** Database reachable and every expected migration applied. */
export async function readiness(): Promise<Readiness> {
  let applied: Set<string>;
  try {
    const rows = await db().$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
    applied = new Set(rows.map((r) => r.migration_name));
  } catch {
    return { ready: false, reason: "database unreachable or not migrated" };
  }
  const expected = g.__blockgateExpectedMigrations;
  if (!expected) return { ready: false, reason: "migrations not checked yet" };
  const pending = expected.filter((m) => !applied.has(m));
  return pending.length === 0 ? { ready: true } : { ready: false, reason: `pending migrations: ${pending.join(", ")}` };
}
