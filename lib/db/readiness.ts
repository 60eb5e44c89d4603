import type { LimitsMode } from "@/lib/limits/shared";
import { reportLimitsMode } from "@/lib/metrics";
import { perProcess } from "@/lib/per-process";
import { db } from "./client";

// The migrations this build expects, recorded by the launcher at start-up (it has just read the
// migrations folder), so the readiness check needs no file access from inside the Next.js bundle;
// and how the process's limits count (lib/limits/shared.ts), recorded by the launcher as it
// changes. Both are read by the Next.js bundle too: per process (lib/per-process.ts).
const state = perProcess("db-readiness", (): { expected?: readonly string[]; limits?: LimitsMode } => ({}));

export function setExpectedMigrations(names: readonly string[]): void {
  state.expected = names;
}

export function setLimitsMode(mode: LimitsMode): void {
  state.limits = mode;
  reportLimitsMode(mode);
}

/** Whether limits are shared through Redis or each process enforces its share (local until the launcher says otherwise). */
export function limitsMode(): LimitsMode {
  return state.limits ?? "local";
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
  const expected = state.expected;
  if (!expected) return { ready: false, reason: "migrations not checked yet" };
  const pending = expected.filter((m) => !applied.has(m));
  return pending.length === 0 ? { ready: true } : { ready: false, reason: `pending migrations: ${pending.join(", ")}` };
}
