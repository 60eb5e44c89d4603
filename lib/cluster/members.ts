import { createHash, createHmac, randomUUID } from "node:crypto";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { db, Prisma } from "@/lib/db/client";
import { listMigrations } from "@/lib/db/migrate";
import { ConfigError, getEnv, SHARED_SECRETS, type SharedSecret } from "@/lib/env";
import { componentLogger, errorMessage } from "@/lib/log";
import { version } from "@/package.json";

/** How often a member renews its heartbeat (and re-counts the live web processes). */
export const HEARTBEAT_MS = 5_000;
/** A member is live while its last heartbeat is at most this many periods old: one or two may come late. */
const LIVE_PERIODS = 3;
/**
 * How long after its last heartbeat a member (of the default period) still counts as live, by the
 * database's clock: what others judge its leases by (lib/webhooks/delivery/store.ts). Killed, it
 * counts that long at most after its death.
 */
export const MEMBER_LIVE_MS = LIVE_PERIODS * HEARTBEAT_MS;

/** What every live member of a cluster must have in common: its build and its shared secrets. */
export interface MemberIdentity {
  /** package.json's version and a hash of the migrations' names. */
  build: string;
  /** Per shared secret, in SHARED_SECRETS' order: the start of an HMAC under it (the secret cannot be read back from it). */
  secrets: string;
}

const FINGERPRINT_LABEL = "blockgate cluster member";

/** This process's identity: its configuration's shared secrets, and this build with its migrations. */
export async function memberIdentity(secrets: Record<SharedSecret, string> = getEnv(), migrations?: readonly string[]): Promise<MemberIdentity> {
  const names = migrations ?? (await listMigrations());
  return {
    build: `${version}+${createHash("sha256").update(names.join("\n")).digest("hex").slice(0, 12)}`,
    secrets: SHARED_SECRETS.map((name) => createHmac("sha256", secrets[name]).update(FINGERPRINT_LABEL).digest("hex").slice(0, 16)).join("."),
  };
}

/**
 * Why `mine` may not join live members with `theirs`, or undefined when it may: the secrets that
 * differ (named, never shown), or the builds.
 */
function mismatch(mine: MemberIdentity, theirs: MemberIdentity & { count: number }): string | undefined {
  const others = `the ${theirs.count} live process${theirs.count === 1 ? "" : "es"} sharing this database`;
  if (theirs.build !== mine.build) {
    return `this process runs build ${mine.build}, ${others} run ${theirs.build || "an earlier build"}. An upgrade stops every process, runs npm run db:migrate, then starts the new build.`;
  }
  const mineParts = mine.secrets.split(".");
  const theirParts = theirs.secrets.split(".");
  const differ = SHARED_SECRETS.filter((_, i) => mineParts[i] !== theirParts[i]);
  if (differ.length === 0) return undefined;
  return `its ${differ.join(", ")} differ${differ.length === 1 ? "s" : ""} from that of ${others}. Every process needs the same ${SHARED_SECRETS.join(", ")}.`;
}

export interface MemberOptions {
  role: "all" | "web" | "worker";
  /** Default: memberIdentity() (tests join with another). */
  identity?: MemberIdentity;
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
  /** The ids of those live processes serving the public API, as last counted: whose counts in Redis still count (lib/limits/shared.ts SharedCounts). */
  webMembers(): ReadonlySet<string>;
  /**
   * Whether, by this process's monotonic clock, its row stayed live from `since` (a
   * performance.now()) until now, with no break in which another process could have found it
   * stale: what it may still do on the strength of being live (a frozen process's clock jumps,
   * and it learns it was not).
   */
  liveSince(since: number): boolean;
  /** Renews the heartbeat and re-counts now (the timer does it every heartbeat). */
  beat(): Promise<void>;
  /** Stops the heartbeat and removes the row. */
  stop(): Promise<void>;
}

export async function joinCluster(options: MemberOptions): Promise<ClusterMembership> {
  const log = componentLogger("cluster");
  const id = randomUUID();
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  // Rows twice as old as live are swept.
  const liveMs = LIVE_PERIODS * heartbeatMs;
  const { build, secrets } = options.identity ?? (await memberIdentity());
  const row = Prisma.sql`(${id}, ${options.role}, ${os.hostname()}, ${process.pid}, ${version}, ${build}, ${secrets})`;
  let web = new Set<string>();
  let failing = false;
  // performance.now() bounds of the row's live run: from the write that began it (or after), to
  // the start of the last heartbeat written plus liveMs (the row is at least as fresh as that).
  let liveFrom = Infinity;
  let liveUntil = -Infinity;
  const refused = await db().$transaction(async (tx) => {
    // One process joins at a time: two starting together with different secrets cannot both see an empty cluster.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('blockgate:cluster-members'))`;
    const live = await tx.$queryRaw<{ build: string; secrets: string; count: number }[]>`
      SELECT build, secrets, count(*) OVER ()::int AS count FROM cluster_members
      WHERE heartbeat_at >= now() - make_interval(secs => ${liveMs / 1000})
      ORDER BY started_at LIMIT 1`;
    const why = live[0] && mismatch({ build, secrets }, live[0]);
    if (why) return why;
    await tx.$executeRaw`INSERT INTO cluster_members (id, role, host, pid, version, build, secrets) VALUES ${row}`;
    return undefined;
  });
  if (refused) throw new ConfigError(`This process cannot join the cluster: ${refused}`);
  const beat = async () => {
    try {
      const started = performance.now();
      // A row gone (swept while this process was frozen) is written again.
      await db().$executeRaw`
        INSERT INTO cluster_members (id, role, host, pid, version, build, secrets) VALUES ${row}
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`;
      const written = performance.now();
      // The last heartbeat had gone stale (frozen, or its writes failed): a new run begins.
      if (written >= liveUntil) liveFrom = written;
      liveUntil = started + liveMs;
      await db().$executeRaw`DELETE FROM cluster_members WHERE heartbeat_at < now() - make_interval(secs => ${(liveMs * 2) / 1000})`;
      const rows = await db().$queryRaw<{ id: string }[]>`
        SELECT id FROM cluster_members WHERE role IN ('web', 'all') AND heartbeat_at >= now() - make_interval(secs => ${liveMs / 1000})`;
      web = new Set(rows.map((r) => r.id));
      if (failing) log.info("cluster heartbeat recovered");
      failing = false;
    } catch (e) {
      // The last count stands: limits keep the share they had.
      if (!failing) log.warn({ err: errorMessage(e) }, "cluster heartbeat failed; keeping the last count of web processes");
      failing = true;
    }
  };
  await beat();
  // One heartbeat at a time, whoever asks (the timer or beat()).
  let beating: Promise<void> | undefined;
  const beatOnce = () => (beating ??= beat().finally(() => (beating = undefined)));
  const timer = setInterval(() => void beatOnce(), heartbeatMs);
  timer.unref();
  return {
    id,
    webProcesses: () => Math.max(1, web.size),
    webMembers: () => web,
    liveSince: (since) => liveFrom <= since && performance.now() < liveUntil,
    beat: beatOnce,
    async stop() {
      clearInterval(timer);
      await beating;
      liveUntil = -Infinity;
      await db()
        .$executeRaw`DELETE FROM cluster_members WHERE id = ${id}`
        .catch((e: unknown) => log.warn({ err: errorMessage(e) }, "could not remove this process from cluster_members; it ages out"));
    },
  };
}
