/**
 * For tests: two web processes of one cluster in this test process. Each is a copy of lib/
 * (vi.resetModules) with its own per-process state (lib/per-process.ts: the handle on globalThis is
 * let go before the second copy loads, as a second process starts with none), and its own
 * connection to the shared limits.
 */
import { expect, vi } from "vitest";
import type { SharedLimits } from "@/lib/limits/shared";

/** `start` run once per process (importing what it needs dynamically, from its copy); resolves once both processes' limits are shared. */
export async function startTwoProcesses<P extends { limits: SharedLimits }>(start: () => Promise<P>): Promise<[P, P]> {
  const a = await start();
  vi.resetModules();
  delete (globalThis as { __blockgate?: unknown }).__blockgate;
  const b = await start();
  await vi.waitFor(() => expect([a.limits.mode, b.limits.mode]).toEqual(["shared", "shared"]), { timeout: 5_000 });
  return [a, b];
}
