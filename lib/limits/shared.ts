import { Redis, type ChainableCommander } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { ClusterMembership } from "@/lib/cluster/members";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { backoffDelayMs, FailureBackoff, TokenBuckets, type BackoffPolicy, type BucketLimit } from "@/lib/rate-limit";

/** shared: limits count in Redis for every process; local: each process enforces its share. */
export type LimitsMode = "local" | "shared";

/** A Redis command unanswered after this long fails: a frozen or unreachable Redis turns limits local instead of holding anything up. */
const COMMAND_TIMEOUT_MS = 500;
/** How long what limits let through waits to be reported to Redis together (one command per key per report). */
export const REPORT_MS = 5;
/** How long a key's calls below its report threshold wait to be reported (BackgroundReports.add). */
export const SLOW_REPORT_MS = 250;
/**
 * The share of a limit that each process may hold back from Redis (the report threshold of a
 * process is this much of the limit ÷ live web processes): all processes together let a limit's
 * window exceed it by at most this much, besides the reports' own delay.
 */
export const HELD_BACK_SHARE = 0.02;
/** How often Redis is pinged: how soon a Redis gone silent is noticed, and one that came back is used again. */
const PROBE_MS = 1_000;
/** How long a key's counts in Redis (SharedCounts) outlive the last process renewing them: a process holding any renews them every COUNTS_RENEW_MS. */
const COUNTS_TTL_S = 60;
const COUNTS_RENEW_MS = 20_000;

/** This process in the cluster, as limits see it: its id, and the live web processes (lib/cluster/members.ts). */
export type LimitsMember = Pick<ClusterMembership, "id" | "webProcesses" | "webMembers">;

export interface SharedLimitsOptions {
  /** REDIS_URL; none: limits stay local. */
  redisUrl?: string;
  /** This process's membership of the cluster, once it joined: under its id the process publishes what it holds (SharedCounts). */
  member?: () => LimitsMember | undefined;
  /** Live web processes (cluster_members), at least 1; default: the member's count, else 1. */
  webProcesses?: () => number;
  /** Told each change of mode (and the first one). */
  onMode?: (mode: LimitsMode) => void;
  logger?: Logger;
  /** Default PROBE_MS (tests shorten it). */
  probeMs?: number;
  /** Default COMMAND_TIMEOUT_MS (tests on a loaded machine lengthen it). */
  commandTimeoutMs?: number;
}

/**
 * What the process's limits share: one Redis connection (it reconnects by itself; a command fails
 * at once while it is down and after COMMAND_TIMEOUT_MS while it is silent, never queued), and the
 * mode. Limits decide every call from memory and report to Redis in the background (lib/gateway/limits.ts
 * RateLimiter, lib/gateway/quota.ts QuotaTracker), so no call waits on Redis (what opens a WebSocket
 * connection or subscription waits one round trip: SharedCounts).
 * While Redis is unset or unreachable the mode is local and a limit enforced alone is divided by
 * the number of live web processes (`share`); a ping every PROBE_MS turns it shared again.
 */
export class SharedLimits {
  private current: LimitsMode = "local";
  private announced = false;
  private readonly redis?: Redis;
  private readonly counters = new Map<string, RateLimiterRedis>();
  private readonly webProcesses: () => number;
  private readonly log: Logger;
  private readonly probe?: NodeJS.Timeout;
  private probing = false;
  private stopped = false;
  /** Told each time limits turn shared (SharedCounts publish what they hold anew). */
  private readonly turnedShared = new Set<() => void>();

  /** Without options: local for good, and nothing said (a process that holds no limits: a worker, a test's default). */
  constructor(private readonly options: SharedLimitsOptions = {}) {
    this.log = options.logger ?? componentLogger("limits");
    this.webProcesses = options.webProcesses ?? (() => options.member?.()?.webProcesses() ?? 1);
    if (options.redisUrl === undefined) {
      if (arguments.length > 0) this.set("local", "REDIS_URL not set");
      return;
    }
    this.redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      commandTimeout: options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      // A command in flight when the connection drops fails rather than being sent again later.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
      // A report sends a command per key at once: written together and read back together, one
      // system call each way instead of one per command (the gateway's CPU per request with shared
      // limits: npm run bench -- cluster).
      enableAutoPipelining: true,
    });
    this.redis.on("error", (e: unknown) => this.unreachable(e));
    this.redis.on("close", () => this.unreachable(new Error("connection closed")));
    this.probe = setInterval(() => void this.ping(), options.probeMs ?? PROBE_MS);
    this.probe.unref();
    this.redis.once("ready", () => void this.ping());
  }

  get mode(): LimitsMode {
    return this.current;
  }

  /** What a limit enforced by this process alone is divided by: 1 while shared, the live web processes while local. */
  share(): number {
    return this.current === "shared" ? 1 : this.webProcesses();
  }

  /** The live web processes (at least 1), shared or not: what a limit's report threshold is divided by. */
  liveWebProcesses(): number {
    return this.webProcesses();
  }

  /**
   * The Redis counter of `points` per `durationS` seconds under `prefix` (one per prefix and size),
   * or undefined while limits are local. Its answers are RateLimiterRes (over: rejected with one);
   * anything else it rejects with is a failure to hand to `failed`.
   */
  counter(prefix: string, points: number, durationS: number): RateLimiterRedis | undefined {
    if (this.current !== "shared" || !this.redis) return undefined;
    const name = `${prefix}:${points}:${durationS}`;
    let c = this.counters.get(name);
    if (!c) {
      c = new RateLimiterRedis({ storeClient: this.redis, keyPrefix: `bg:${prefix}`, points, duration: durationS, rejectIfRedisNotReady: true });
      this.counters.set(name, c);
    }
    return c;
  }

  /** While limits are shared and the process has joined the cluster: the Redis connection and the process's membership (for SharedCounts). */
  asMember(): { redis: Redis; member: LimitsMember } | undefined {
    const member = this.options.member?.();
    return this.current === "shared" && this.redis && member ? { redis: this.redis, member } : undefined;
  }

  /** Runs `listener` each time limits turn shared (Redis answers again, or for the first time). */
  onShared(listener: () => void): void {
    this.turnedShared.add(listener);
  }

  /** Sets a counter's key to `points` for `ttlS` seconds unless it exists (a count started from what the database holds). */
  seed(prefix: string, key: string, points: number, ttlS: number): void {
    if (this.current !== "shared" || !this.redis) return;
    this.redis.set(`bg:${prefix}:${key}`, Math.ceil(points), "EX", ttlS, "NX").catch((e: unknown) => this.unreachable(e));
  }

  /** Keeps a counter's key `ttlS` seconds more (from now), in the background. */
  extend(prefix: string, key: string, ttlS: number): void {
    if (this.current !== "shared" || !this.redis) return;
    this.redis.expire(`bg:${prefix}:${key}`, ttlS).catch((e: unknown) => this.unreachable(e));
  }

  /**
   * `op` on Redis `counters` (those of counter(), undefined while limits are local), or `local` when
   * there are none or Redis fails (limits then turn local): for a limit that may wait on Redis.
   */
  async attempt<C, T>(counters: C | undefined, op: (counters: C) => Promise<T>, local: () => T): Promise<T> {
    if (counters !== undefined) {
      try {
        return await op(counters);
      } catch (e) {
        this.unreachable(e);
      }
    }
    return local();
  }

  /** For a counter's rejection: the wait it says when it is a limit's answer, else (Redis failed) undefined, and limits go local. */
  refusal(reason: unknown): number | undefined {
    if (reason instanceof RateLimiterRes) return reason.msBeforeNext;
    this.unreachable(reason);
    return undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.probe);
    this.redis?.disconnect();
  }

  private unreachable(e: unknown): void {
    if (this.stopped) return;
    this.set("local", `Redis unreachable: ${errorMessage(e)}`);
  }

  private async ping(): Promise<void> {
    // Not connected (yet, or again): the connection's own error and close events say why.
    if (!this.redis || this.probing || this.redis.status !== "ready") return;
    this.probing = true;
    try {
      await this.redis.ping();
      this.set("shared");
    } catch (e) {
      this.unreachable(e);
    } finally {
      this.probing = false;
    }
  }

  private set(mode: LimitsMode, why?: string): void {
    if (mode === this.current && this.announced) return;
    this.current = mode;
    this.announced = true;
    if (mode === "shared") {
      this.log.info("limits: shared");
      for (const listener of this.turnedShared) listener();
    } else if (this.redis) this.log.warn(`limits: local (${why ?? "Redis unreachable"}): each process enforces its share of every limit until Redis answers again`);
    else this.log.info(`limits: local (${why ?? "no Redis"})`);
    this.options.onMode?.(mode);
  }
}

/**
 * What limits let through from memory, reported to Redis counters in the background (every
 * REPORT_MS, one command per counter and key), and the keys Redis answered are over, refused here
 * until its window ends: how a limit on a path that never waits shares its count.
 */
export class BackgroundReports {
  private readonly refusedUntil = new Map<string, number>();
  /** What was let through and not reported yet, by counter and key. */
  private readonly pending = new Map<RateLimiterRedis, Map<string, number>>();
  /** The keys whose pending amount reached their threshold: reported at the next report. */
  private readonly due = new Map<RateLimiterRedis, Set<string>>();
  private timer?: NodeJS.Timeout;
  private slowTimer?: NodeJS.Timeout;

  /** `batchMs`: how long what is let through waits to be reported together; 0: reported at once (a limit of few, rare takes). */
  constructor(
    private readonly shared: SharedLimits,
    private readonly batchMs = REPORT_MS,
  ) {}

  /** Milliseconds the key is still refused for (performance.now() `now`): Redis said it is over; 0 if not. */
  refusedFor(key: string, now: number): number {
    if (this.refusedUntil.size === 0) return 0;
    const until = this.refusedUntil.get(key);
    if (until === undefined) return 0;
    if (until > now) return until - now;
    this.refusedUntil.delete(key);
    return 0;
  }

  /**
   * Counts `points` for the key in `counter`. Reported at the next report once the key's unreported
   * points reach `threshold`, and within SLOW_REPORT_MS otherwise: a process holds back at most
   * `threshold` of a key at any time, so N processes let a window exceed the limit by at most N ×
   * threshold (besides the report's own delay), while a key far from its limit costs Redis a
   * command per threshold's worth of calls instead of one per call (0: every call reported).
   */
  add(counter: RateLimiterRedis, key: string, points: number, threshold = 0): void {
    let byKey = this.pending.get(counter);
    if (!byKey) this.pending.set(counter, (byKey = new Map()));
    const total = (byKey.get(key) ?? 0) + points;
    byKey.set(key, total);
    if (total >= threshold) {
      let keys = this.due.get(counter);
      if (!keys) this.due.set(counter, (keys = new Set()));
      keys.add(key);
      if (this.batchMs === 0) this.send();
      else this.timer ??= setTimeout(this.send, this.batchMs);
    } else {
      this.slowTimer ??= setTimeout(this.sendAll, SLOW_REPORT_MS);
    }
  }

  /** Takes back points counted for the key (that turned out not to count): from the next report, or from Redis. */
  takeBack(counter: RateLimiterRedis, key: string, points: number): void {
    const byKey = this.pending.get(counter);
    const pending = byKey?.get(key) ?? 0;
    const fromPending = Math.min(pending, points);
    if (fromPending > 0) byKey!.set(key, pending - fromPending);
    if (points > fromPending) counter.reward(key, points - fromPending).catch((e: unknown) => this.shared.refusal(e));
  }

  /** Reports the keys that reached their threshold. */
  private readonly send = () => {
    this.timer = undefined;
    for (const [counter, keys] of this.due) {
      const byKey = this.pending.get(counter);
      for (const key of keys) {
        const points = byKey?.get(key) ?? 0;
        byKey?.delete(key);
        this.report(counter, key, points);
      }
    }
    this.due.clear();
  };

  /** Reports everything held back. */
  private readonly sendAll = () => {
    this.slowTimer = undefined;
    for (const [counter, byKey] of this.pending) for (const [key, points] of byKey) this.report(counter, key, points);
    this.pending.clear();
    this.due.clear();
  };

  private report(counter: RateLimiterRedis, key: string, points: number): void {
    if (points <= 0) return;
    counter.consume(key, Math.ceil(points)).then(
      // Used up: the next would be over, refused here already.
      (res) => res.remainingPoints <= 0 && this.refuse(key, res.msBeforeNext),
      (reason: unknown) => this.refuse(key, this.shared.refusal(reason)),
    );
  }

  private refuse(key: string, waitMs: number | undefined): void {
    if (waitMs !== undefined && waitMs > 0) this.refusedUntil.set(key, performance.now() + waitMs);
  }
}

/**
 * A token-bucket limit per key (lib/rate-limit.ts TokenBuckets: `burst` at once, then one every
 * `refillMs`) held by every process of the cluster together. In Redis it is counted as a window of
 * `burst` per the time an empty bucket takes to fill (burst × refillMs), which keeps the burst and
 * the long-run rate; while limits are local, each process holds its share of the bucket.
 *
 * Two ways to use one: from memory (`waitMs`, `take`, `giveBack`: the gateway, which never waits;
 * what was taken is reported in the background, see BackgroundReports), or awaiting Redis (`consume`,
 * `add`, `refund`, `excess`: the console), which falls back to the local share when Redis fails.
 */
export class SharedBuckets {
  private readonly local: TokenBuckets;
  private readonly reports: BackgroundReports;
  private readonly durationS: number;

  /** `name`: the counter's prefix in Redis, one per limit. */
  constructor(
    private readonly name: string,
    readonly limit: BucketLimit,
    private readonly shared: SharedLimits,
  ) {
    this.local = new TokenBuckets(limit, () => shared.share());
    // Taken only while the bucket has room (a burst per refill at most): each is reported at once.
    this.reports = new BackgroundReports(shared, 0);
    this.durationS = Math.max(1, Math.round((limit.burst * limit.refillMs) / 1000));
  }

  private counter(): RateLimiterRedis | undefined {
    return this.shared.counter(this.name, this.limit.burst, this.durationS);
  }

  /** Milliseconds until the key may make a request (0: it may now), from memory. Takes nothing. */
  waitMs(key: string, now = performance.now()): number {
    const refused = this.reports.refusedFor(key, now);
    return refused > 0 ? Math.ceil(refused) : this.local.waitMs(key, now);
  }

  /** Counts one request for the key (after waitMs answered 0), reported to Redis in the background. */
  take(key: string, now = performance.now()): void {
    this.local.take(key, now);
    const counter = this.counter();
    if (counter) this.reports.add(counter, key, 1);
  }

  /** Returns one request `take` counted for the key. */
  giveBack(key: string, now = performance.now()): void {
    this.local.giveBack(key, now);
    const counter = this.counter();
    if (counter) this.reports.takeBack(counter, key, 1);
  }

  /** Counts one request for the key: 0, or the milliseconds until it may make one (then nothing is counted). */
  consume(key: string): Promise<number> {
    return this.shared.attempt(
      this.counter(),
      (counter) =>
        counter.consume(key, 1).then(
          () => 0,
          (reason: unknown) => {
            if (!(reason instanceof RateLimiterRes)) throw reason;
            counter.reward(key, 1).catch((e: unknown) => this.shared.refusal(e));
            return Math.max(1, reason.msBeforeNext);
          },
        ),
      () => {
        const wait = this.local.waitMs(key);
        if (wait === 0) this.local.take(key);
        return wait;
      },
    );
  }

  /** Counts one request for the key whatever the limit says (a budget counting how far it is exceeded). */
  add(key: string): Promise<void> {
    return this.change(key, 1);
  }

  /** Returns one request `consume` or `add` counted for the key. */
  refund(key: string): Promise<void> {
    return this.change(key, -1);
  }

  private change(key: string, by: 1 | -1): Promise<void> {
    return this.shared.attempt(
      this.counter(),
      async (counter) => {
        await counter.penalty(key, by);
      },
      () => (by > 0 ? this.local.take(key) : this.local.giveBack(key)),
    );
  }

  /** null while the key may make a request; otherwise how many requests its count is over the limit (0: at it). */
  excess(key: string): Promise<number | null> {
    return this.shared.attempt(
      this.counter(),
      async (counter) => {
        const consumed = (await counter.get(key))?.consumedPoints ?? 0;
        return consumed < this.limit.burst ? null : consumed - this.limit.burst;
      },
      () => {
        const wait = this.local.waitMs(key);
        return wait === 0 ? null : Math.ceil(wait / this.local.limit.refillMs);
      },
    );
  }
}

/**
 * Failures counted per key with a growing wait (lib/rate-limit.ts FailureBackoff) for every process
 * of the cluster together: in Redis, the key's failures (forgotten `windowMs` after the last) and the
 * wait the last one set; while limits are local, each process allows its share of the free failures.
 * Awaits Redis (the console's sign-in), falling back to the local count when it fails.
 */
export class SharedBackoff {
  private readonly local: FailureBackoff;
  private readonly windowS: number;

  constructor(
    private readonly name: string,
    readonly policy: BackoffPolicy,
    private readonly shared: SharedLimits,
  ) {
    this.local = new FailureBackoff(policy, () => shared.share());
    this.windowS = Math.ceil(policy.windowMs / 1000);
  }

  private counters(): { failures: RateLimiterRedis; waits: RateLimiterRedis } | undefined {
    const failures = this.shared.counter(`${this.name}:failures`, Number.MAX_SAFE_INTEGER, this.windowS);
    const waits = this.shared.counter(`${this.name}:wait`, 1, 1);
    return failures && waits && { failures, waits };
  }

  /** Milliseconds the key must still wait before its next attempt (0: none). */
  waitMs(key: string): Promise<number> {
    return this.shared.attempt(
      this.counters(),
      async ({ waits }) => Math.max(0, (await waits.get(key))?.msBeforeNext ?? 0),
      () => this.local.waitMs(key),
    );
  }

  recordFailure(key: string): Promise<void> {
    return this.shared.attempt(
      this.counters(),
      async ({ failures, waits }) => {
        const { consumedPoints } = await failures.penalty(key, 1);
        this.shared.extend(`${this.name}:failures`, key, this.windowS);
        const over = consumedPoints - this.policy.freeFailures;
        if (over >= 0) await waits.block(key, Math.ceil(backoffDelayMs(this.policy, over) / 1000));
      },
      () => this.local.recordFailure(key),
    );
  }

  async forget(key: string): Promise<void> {
    this.local.forget(key);
    await this.shared.attempt(
      this.counters(),
      async ({ failures, waits }) => {
        await Promise.all([failures.delete(key), waits.delete(key)]);
      },
      () => undefined,
    );
  }
}

/** The replies of a pipeline or transaction; rejects with the first command's error. */
async function replies(batch: ChainableCommander): Promise<unknown[]> {
  const results = await batch.exec();
  if (!results) throw new Error("the transaction was aborted");
  return results.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

/**
 * What a key holds at once (its open WebSocket connections, their subscriptions), capped per key for
 * every web process of the cluster together. Each process counts what it holds in memory and, while
 * limits are shared, keeps its count in Redis: one hash per key (`bg:<name>:<key>`), one field per
 * process (its cluster member id). An admission writes the process's count with the one it admits
 * and reads the hash back in one transaction (MULTI: one round trip), and admits when that and the
 * fields of the live web processes stay within the cap. The live processes are those of
 * cluster_members as last counted (every 5 s): a process gone without a word stops counting once its
 * heartbeat is 15 s old; one that just joined counts from the others' next count. While limits are
 * local, or Redis fails during an admission, each process admits its share: the cap ÷ the live web
 * processes, rounded up, at least 1.
 *
 * Redis runs the transactions one after the other, so two processes admitting at once cannot both
 * take the last place: the later one reads the earlier one's count. The cap is soft only around
 * Redis being away (each process then admits up to its share by its own count: with nothing open
 * before, up to the cap plus one per process, rounded up; what was open before stays, and the next
 * admissions wait until enough is released) and around a process joining or going (as above).
 * Releases are published in the background (within REPORT_MS), the whole count again each time
 * limits turn shared (Redis back, or restarted empty) and every COUNTS_RENEW_MS while the process
 * holds any (the hash expires COUNTS_TTL_S after the last write).
 */
export class SharedCounts {
  private readonly held = new Map<string, number>();
  /** Keys whose count in Redis may differ from `held` (0: its field is to be deleted). */
  private readonly unpublished = new Set<string>();
  private publishing?: NodeJS.Timeout;
  private renewal?: NodeJS.Timeout;

  /** `name`: the hashes' prefix in Redis, one per kind of thing held. */
  constructor(
    private readonly name: string,
    private readonly shared: SharedLimits,
  ) {
    shared.onShared(() => this.publishAll());
  }

  /** Counts one more for the key when the cluster holds fewer than `cap`: true; false, and nothing is counted, when it holds that many. */
  async acquire(key: string, cap: number): Promise<boolean> {
    // Counted before asking: admissions made here meanwhile see it.
    const mine = this.change(key, 1);
    const admitted = await this.shared.attempt(
      this.shared.asMember(),
      async ({ redis, member }) => {
        const hash = this.hash(key);
        const [, , fields] = await replies(redis.multi().hset(hash, member.id, mine).expire(hash, COUNTS_TTL_S).hgetall(hash));
        const live = member.webMembers();
        let total = mine;
        for (const [id, count] of Object.entries(fields as Record<string, string>)) if (id !== member.id && live.has(id)) total += Number(count) || 0;
        return total <= cap;
      },
      () => mine <= Math.max(1, Math.ceil(cap / this.shared.share())),
    );
    if (!admitted) this.release(key);
    return admitted;
  }

  /** Counts one less for the key (one `acquire` admitted). */
  release(key: string): void {
    this.change(key, -1);
    this.publishing ??= setTimeout(this.publish, REPORT_MS);
  }

  private hash(key: string): string {
    return `bg:${this.name}:${key}`;
  }

  private change(key: string, by: 1 | -1): number {
    const n = (this.held.get(key) ?? 0) + by;
    if (n <= 0) this.held.delete(key);
    else this.held.set(key, n);
    this.unpublished.add(key);
    if (this.held.size === 0) {
      clearInterval(this.renewal);
      this.renewal = undefined;
    } else this.renewal ??= setInterval(() => this.publishAll(), COUNTS_RENEW_MS).unref();
    return n;
  }

  private publishAll(): void {
    for (const key of this.held.keys()) this.unpublished.add(key);
    this.publish();
  }

  /** Writes the unpublished counts, in the background; kept for the next time if Redis fails or limits are local. */
  private readonly publish = () => {
    clearTimeout(this.publishing);
    this.publishing = undefined;
    if (this.unpublished.size === 0) return;
    const keys = [...this.unpublished];
    void this.shared.attempt(
      this.shared.asMember(),
      async ({ redis, member }) => {
        this.unpublished.clear();
        const batch = redis.pipeline();
        for (const key of keys) {
          const n = this.held.get(key);
          if (n === undefined) batch.hdel(this.hash(key), member.id);
          else batch.hset(this.hash(key), member.id, n).expire(this.hash(key), COUNTS_TTL_S);
        }
        await replies(batch);
      },
      () => {
        for (const key of keys) this.unpublished.add(key);
      },
    );
  };
}
