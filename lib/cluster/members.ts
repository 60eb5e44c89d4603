import { randomUUID } from "node:crypto";
import os from "node:os";
import { db } from "@/lib/db/client";
import { componentLogger, errorMessage } from "@/lib/log";
import { version } from "@/package.json";

/** How often a member renews its heartbeat (and re-counts the live web processes). */
export const HEARTBEAT_MS = 5_000;

export interface MemberOptions {
  role: "all" | "web" | "worker";
  /** Default HEARTBEAT_MS (tests shorten it). */
  heartbeatMs?: number;
}

/**
 * This process's row in cluster_members, renewed from the database clock (never this host's, so
 * hosts whose clocks disagree still agree on who is live). `webProcesses` is the number of live
 * processes serving the public API (ROLE web or all) as last counted, at least 1: a limit a process
 * enforces on its own while Redis is away is that limit divided by it.
 */
export interface ClusterMembership {
  readonly id: string;
  webProcesses(): number;
  /** Renews the heartbeat and re-counts now (the timer does it every heartbeat). */
  beat(): Promise<void>;
  /** Stops the heartbeat and removes the row. */
  stop(): Promise<void>;
}

export async function joinCluster(options: MemberOptions): Promise<ClusterMembership> {
  const log = componentLogger("cluster");
  const id = randomUUID();
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  // Live: a heartbeat within three periods. Rows twice as old are swept.
  const liveMs = 3 * heartbeatMs;
  let web = 1;
  let failing = false;
  await db().$executeRaw`
    INSERT INTO cluster_members (id, role, host, pid, version) VALUES (${id}, ${options.role}, ${os.hostname()}, ${process.pid}, ${version})`;
  const beat = async () => {
    try {
      // A row gone (swept while this process was frozen) is written again.
      await db().$executeRaw`
        INSERT INTO cluster_members (id, role, host, pid, version) VALUES (${id}, ${options.role}, ${os.hostname()}, ${process.pid}, ${version})
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`;
      await db().$executeRaw`DELETE FROM cluster_members WHERE heartbeat_at < now() - make_interval(secs => ${(liveMs * 2) / 1000})`;
      const rows = await db().$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM cluster_members WHERE role IN ('web', 'all') AND heartbeat_at >= now() - make_interval(secs => ${liveMs / 1000})`;
      web = Math.max(1, rows[0]?.n ?? 1);
      if (failing) log.info("cluster heartbeat recovered");
      failing = false;
    } catch (e) {
      // The last count stands: limits keep the share they had.
      if (!failing) log.warn({ err: errorMessage(e) }, "cluster heartbeat failed; keeping the last count of web processes");
      failing = true;
    }
  };
  await beat();
  let beating: Promise<void> | undefined;
  const timer = setInterval(() => {
    beating ??= beat().finally(() => (beating = undefined));
  }, heartbeatMs);
  timer.unref();
  return {
    id,
    webProcesses: () => web,
    beat: () => (beating ??= beat().finally(() => (beating = undefined))),
    async stop() {
      clearInterval(timer);
      await beating;
      await db()
        .$executeRaw`DELETE FROM cluster_members WHERE id = ${id}`
        .catch((e: unknown) => log.warn({ err: errorMessage(e) }, "could not remove this process from cluster_members; it ages out"));
    },
  };
}
