import { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";

/** shared: limits count in Redis for every process; local: each process enforces its share. */
export type LimitsMode = "local" | "shared";

/** A Redis command unanswered after this long fails: a frozen or unreachable Redis turns limits local instead of holding anything up. */
const COMMAND_TIMEOUT_MS = 500;
/** How long what limits let through waits to be reported to Redis together (one command per key per report). */
export const REPORT_MS = 5;
/** How often Redis is pinged: how soon a Redis gone silent is noticed, and one that came back is used again. */
const PROBE_MS = 1_000;

export interface SharedLimitsOptions {
  /** REDIS_URL; none: limits stay local. */
  redisUrl?: string;
  /** Live web processes (cluster_members), at least 1; default 1. */
  webProcesses?: () => number;
  /** Told each change of mode (and the first one). */
  onMode?: (mode: LimitsMode) => void;
  logger?: Logger;
  /** Default PROBE_MS (tests shorten it). */
  probeMs?: number;
}

/**
 * What the process's limits share: one Redis connection (it reconnects by itself; a command fails
 * at once while it is down and after COMMAND_TIMEOUT_MS while it is silent, never queued), and the
 * mode. Limits decide every call from memory and report to Redis in the background (lib/gateway/limits.ts
 * RateLimiter, lib/gateway/quota.ts QuotaTracker), so nothing a client waits for waits on Redis.
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

  constructor(private readonly options: SharedLimitsOptions = {}) {
    this.log = options.logger ?? componentLogger("limits");
    this.webProcesses = options.webProcesses ?? (() => 1);
    if (options.redisUrl === undefined) {
      this.set("local", "REDIS_URL not set");
      return;
    }
    this.redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      // A command in flight when the connection drops fails rather than being sent again later.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
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

  /** Sets a counter's key to `points` for `ttlS` seconds unless it exists (a count started from what the database holds). */
  seed(prefix: string, key: string, points: number, ttlS: number): void {
    if (this.current !== "shared" || !this.redis) return;
    this.redis.set(`bg:${prefix}:${key}`, Math.ceil(points), "EX", ttlS, "NX").catch((e: unknown) => this.unreachable(e));
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
    if (mode === "shared") this.log.info("limits: shared");
    else if (this.redis) this.log.warn(`limits: local (${why ?? "Redis unreachable"}): each process enforces its share of every limit until Redis answers again`);
    else this.log.info(`limits: local (${why ?? "no Redis"})`);
    this.options.onMode?.(mode);
  }
}
