/**
 * The process's Prometheus metrics: one prom-client registry per process (lib/per-process.ts: the
 * Next.js bundles count into the custom server's), with Node's own (event-loop lag, heap, GC) and
 * the service's, listed with their labels in README.md ("Metrics"). Code that measures something
 * calls the functions below; GET /metrics (lib/metrics/endpoint.ts) writes the registry.
 *
 * Every label value is bounded: a network is a catalog slug (else "unknown"), a method a name the
 * code meters (methodLabel), an interface, upstream, stream, kind or outcome a word fixed in code.
 * No label carries a project, key, address, URL or text a caller sent.
 */
import { setTimeout as delay } from "node:timers/promises";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { networkBySlug } from "@/lib/networks";
import { perProcess } from "@/lib/per-process";
import { exposeFamily, SeriesFamily, type Series } from "./series";

/** A label with nothing to name: a request for no network (the webhook inbox), no call run. */
export const NONE = "none";
/** A network the catalog does not have. */
export const UNKNOWN = "unknown";
/** A method past the names a label may take (methodLabel). */
export const OTHER = "other";

/** Seconds: from a cached answer (about a millisecond) to an upstream's deadline. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Distinct method labels an interface may have; names past it are counted as "other". */
export const MAX_METHODS_PER_INTERFACE = 300;
/** A method label: a catalog name or a fixed word (eth_getBalance, status, ledger_info, webhooks.create, event:NewBlock). */
const METHOD_NAME = /^[A-Za-z][A-Za-z0-9_.:-]{0,79}$/;

export type UpstreamOutcome = "ok" | "error" | "bad_answer" | "timeout" | "unreachable";
export type DeliveryOutcome = "success" | "retry" | "failed" | "gone";
export type FlushStore = "usage" | "request_log";

/** An upstream pool's nodes as the health gauge reads them at each scrape. */
export interface UpstreamHealthSource {
  /** Each node: its network and upstream labels, and whether it is used now (not passed over or left out). */
  nodes(): ReadonlyArray<{ network: string; upstream: string; healthy: boolean }>;
}

/** What the due-queue gauges read at a scrape (lib/webhooks/delivery/store.ts dueQueue). */
export interface QueueStats {
  due: number;
  /** Seconds since the oldest due message became due; null when none is. */
  oldestDueSeconds: number | null;
  /** Subscriptions the service turned off (410 Gone, or failing for days) and not turned on again. */
  disabledSubscriptions: number;
}

/** Where a follower stream stands. */
interface StreamProgress {
  block: number;
  /** The block it is working towards: the head, or for a stream that waits for finality the head less the finality depth. */
  target: number;
  /** The last block's time (seconds since the epoch), once it handled one. */
  blockTime?: number;
}

interface FollowerProgress {
  labels: { follower: string; network: string };
  head: number;
  streams: Map<string, StreamProgress>;
}

/** A scrape waits this long at most for the due-queue query (its statement is bounded too). */
const QUEUE_WAIT_MS = 2000;

function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new SeriesFamily(["interface", "network", "method", "status"], LATENCY_BUCKETS);
  exposeFamily(registry, requests, {
    histogram: { name: "blockgate_gateway_request_duration_seconds", help: "Public API requests (and WebSocket calls) from arrival to answer, by interface, network, method and status class." },
    counters: [
      { name: "blockgate_gateway_requests_total", help: "Public API requests (and WebSocket calls), by interface, network, method and status class.", value: (s) => s.count },
      { name: "blockgate_gateway_cu_total", help: "Compute units the public API's calls cost.", value: (s) => s.total },
    ],
  });
  const refusals = new SeriesFamily(["interface", "network", "reason"]);
  exposeFamily(registry, refusals, { counters: [{ name: "blockgate_gateway_refusals_total", help: "Calls refused by the plan's limits: reason rate_limit (CU per second) or quota (the allowance).", value: (s) => s.count }] });

  const upstreamCalls = new SeriesFamily(["network", "upstream", "outcome"], LATENCY_BUCKETS);
  exposeFamily(registry, upstreamCalls, {
    histogram: { name: "blockgate_upstream_call_duration_seconds", help: "Requests to upstream nodes and devnets, by network, upstream and outcome." },
    counters: [{ name: "blockgate_upstream_calls_total", help: "Requests to upstream nodes and devnets, by network, upstream and outcome.", value: (s) => s.count }],
  });
  const upstreams = new Set<UpstreamHealthSource>();
  new Gauge({
    name: "blockgate_upstream_up",
    help: "1 while an upstream node is used, 0 while it is passed over after a failure or left out (it serves another chain).",
    labelNames: ["network", "upstream"],
    registers: [registry],
    collect() {
      this.reset();
      for (const pool of upstreams) for (const n of pool.nodes()) this.set({ network: n.network, upstream: n.upstream }, n.healthy ? 1 : 0);
    },
  });

  const followers = new Map<string, FollowerProgress>();
  const followerGauge = (name: string, help: string, read: (f: FollowerProgress, s: StreamProgress) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ["follower", "network", "stream"],
      registers: [registry],
      collect() {
        this.reset();
        for (const f of followers.values()) {
          for (const [stream, s] of f.streams) {
            const value = read(f, s);
            if (value !== undefined) this.set({ ...f.labels, stream }, value);
          }
        }
      },
    });
  followerGauge("blockgate_follower_head_block", "The chain's head as its follower last saw it.", (f) => f.head);
  followerGauge("blockgate_follower_block", "The last block a follower stream handled.", (_f, s) => s.block);
  followerGauge("blockgate_follower_blocks_behind", "Blocks between a follower stream's last block and the block it works towards (the head, or the head less the finality depth).", (_f, s) => Math.max(0, s.target - s.block));
  followerGauge("blockgate_follower_lag_seconds", "Age of the last block a follower stream handled (its block time to now).", (_f, s) => (s.blockTime === undefined ? undefined : Math.max(0, Date.now() / 1000 - s.blockTime)));

  const enqueued = new Counter({
    name: "blockgate_webhook_messages_enqueued_total",
    help: "Webhook messages written to the outbox: source chain (followers) or asked (test, replay); outcome queued, or refused (written as failed: the subscription's queue was full).",
    labelNames: ["network", "source", "outcome"],
    registers: [registry],
  });
  const deliveries = new SeriesFamily(["network", "outcome"], LATENCY_BUCKETS);
  exposeFamily(registry, deliveries, {
    histogram: { name: "blockgate_webhook_delivery_duration_seconds", help: "Webhook delivery attempts, from sending to the receiver's whole answer, by outcome." },
    counters: [{ name: "blockgate_webhook_delivery_attempts_total", help: "Webhook delivery attempts recorded, by what followed: success, retry (scheduled again), failed (no retry left) or gone (410: subscription turned off).", value: (s) => s.count }],
  });
  const turnedOff = new Counter({
    name: "blockgate_webhook_subscriptions_turned_off_total",
    help: "Webhook subscriptions the delivery worker turned off: reason gone (410) or failing (every delivery failed for days).",
    labelNames: ["reason"],
    registers: [registry],
  });
  const queue: { sources: Set<() => Promise<QueueStats>>; running?: Promise<QueueStats | undefined> } = { sources: new Set() };
  // One query at a time: the gauges of one scrape share it, and a scrape while one is still running
  // (the database is slow) waits for it rather than starting another.
  const readQueue = async (): Promise<QueueStats | undefined> => {
    const [source] = queue.sources;
    if (!source) return undefined;
    queue.running ??= source()
      .catch(() => undefined)
      .finally(() => (queue.running = undefined));
    const late = new AbortController();
    const waited = delay(QUEUE_WAIT_MS, undefined, { signal: late.signal }).catch(() => undefined);
    return Promise.race([queue.running, waited]).finally(() => late.abort());
  };
  const queueGauge = (name: string, help: string, read: (q: QueueStats) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        const stats = await readQueue();
        const value = stats && read(stats);
        if (value !== undefined && value !== null) this.set(value);
      },
    });
  queueGauge("blockgate_webhook_queue_due", "Webhook messages due for delivery and not claimed by a worker (read at the scrape; absent when the query failed or took over 2 s).", (q) => q.due);
  queueGauge("blockgate_webhook_queue_oldest_due_seconds", "How long the oldest due webhook message has waited since it became due (0 when none is).", (q) => q.oldestDueSeconds ?? 0);
  queueGauge("blockgate_webhook_subscriptions_disabled", "Webhook subscriptions the service turned off (410 Gone, or failing for days) that are still off.", (q) => q.disabledSubscriptions);

  const flushes = new SeriesFamily(["store"], LATENCY_BUCKETS);
  exposeFamily(registry, flushes, { histogram: { name: "blockgate_flush_duration_seconds", help: "Writes of buffered usage (store usage) and request log rows (store request_log) to the database, failed ones included." } });
  const flushFailures = new Counter({ name: "blockgate_flush_failures_total", help: "Flushes that failed (what they held is kept and written by a later one).", labelNames: ["store"], registers: [registry] });

  const leaderLocks = new Set<{ readonly kind: string; readonly held: boolean }>();
  new Gauge({
    name: "blockgate_leader_locks_held",
    help: "Leader locks this process holds, by kind of work (webhook-follower, consensus-index, evm-devnet, …).",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      this.reset();
      const byKind = new Map<string, number>();
      for (const lock of leaderLocks) if (lock.held) byKind.set(lock.kind, (byKind.get(lock.kind) ?? 0) + 1);
      for (const [kind, n] of byKind) this.set({ kind }, n);
    },
  });
  const limits = { mode: "local" };
  new Gauge({
    name: "blockgate_limits_shared",
    help: "1 while this process's plan and abuse limits are shared with the others through Redis, 0 while it enforces its share alone (no REDIS_URL, or Redis unreachable).",
    registers: [registry],
    collect() {
      this.set(limits.mode === "shared" ? 1 : 0);
    },
  });

  return { registry, requests, refusals, upstreamCalls, upstreams, followers, enqueued, deliveries, turnedOff, queue, flushes, flushFailures, leaderLocks, limits, methods: new Map<string, Set<string>>() };
}

const metrics = perProcess("metrics", createMetrics);

/** The process's registry. */
export function metricsRegistry(): Registry {
  return metrics.registry;
}

/** The network label of a slug: the catalog's, or "unknown". */
export function networkLabel(slug: string): string {
  return networkBySlug(slug) ? slug : UNKNOWN;
}

/**
 * The method label of a call an interface metered: its name as the code meters it (a catalog name,
 * or a fixed word: invalid, unsupported, rejected, batch), or "other" for a name of another shape
 * or past MAX_METHODS_PER_INTERFACE names, so the labels stay bounded even if a name ever came
 * from a request.
 */
export function methodLabel(iface: string, name: string): string {
  let known = metrics.methods.get(iface);
  if (!known) metrics.methods.set(iface, (known = new Set()));
  if (known.has(name)) return name;
  if (known.size >= MAX_METHODS_PER_INTERFACE || !METHOD_NAME.test(name)) return OTHER;
  known.add(name);
  return name;
}

/** The status class label of an answer: its HTTP status's, or rpc_error for a JSON-RPC error (whatever the HTTP status). */
export type StatusLabel = "2xx" | "4xx" | "5xx" | "rpc_error";

/** The series a public API request (or WebSocket call) is observed in: its seconds, and its CU as the total. */
export function requestSeries(iface: string, network: string, method: string, status: StatusLabel): Series {
  return metrics.requests.get(iface, network, methodLabel(iface, method), status);
}

/** Counts a call the plan's limits refused. */
export function countRefusal(iface: string, network: string, reason: "rate_limit" | "quota"): void {
  metrics.refusals.get(iface, network, reason).count++;
}

/** The series a request to an upstream node is observed in (its seconds). `network`: a label (networkLabel). */
export function upstreamCallSeries(network: string, upstream: string, outcome: UpstreamOutcome): Series {
  return metrics.upstreamCalls.get(network, upstream, outcome);
}

/** Reports a pool's nodes in blockgate_upstream_up until the returned function is called. */
export function trackUpstreams(source: UpstreamHealthSource): () => void {
  metrics.upstreams.add(source);
  return () => void metrics.upstreams.delete(source);
}

/** Reports a leader lock in blockgate_leader_locks_held (while `held`) until the returned function is called. */
export function trackLeaderLock(lock: { readonly kind: string; readonly held: boolean }): () => void {
  metrics.leaderLocks.add(lock);
  return () => void metrics.leaderLocks.delete(lock);
}

/**
 * Where a follower stands on a network: the head it saw and, per stream, its last block and the
 * block it works towards; `blockTime` (seconds since the epoch) when it has just handled that block.
 */
export function followerProgress(follower: string, network: string, head: bigint, streams: ReadonlyArray<{ stream: string; block: bigint; target: bigint; blockTime?: number }>): void {
  const labels = { follower, network: networkLabel(network) };
  const key = `${labels.follower} ${labels.network}`;
  let f = metrics.followers.get(key);
  if (!f) metrics.followers.set(key, (f = { labels, head: 0, streams: new Map() }));
  f.head = Number(head);
  for (const s of streams) {
    const known = f.streams.get(s.stream);
    f.streams.set(s.stream, { block: Number(s.block), target: Number(s.target), blockTime: s.blockTime ?? known?.blockTime });
  }
}

/** The follower stopped following the network here (stopped, or another process took over): its gauges go. */
export function forgetFollower(follower: string, network: string): void {
  metrics.followers.delete(`${follower} ${networkLabel(network)}`);
}

/** Counts messages written to the outbox after their transaction committed. */
export function countEnqueued(network: string, source: "chain" | "asked", queued: ReadonlyArray<{ refused?: string }>): void {
  let refused = 0;
  for (const m of queued) if (m.refused !== undefined) refused++;
  const labels = { network: networkLabel(network), source };
  if (queued.length > refused) metrics.enqueued.inc({ ...labels, outcome: "queued" }, queued.length - refused);
  if (refused > 0) metrics.enqueued.inc({ ...labels, outcome: "refused" }, refused);
}

/** Counts a recorded delivery attempt and its seconds. */
export function countDelivery(network: string, outcome: DeliveryOutcome, seconds: number): void {
  metrics.deliveries.get(networkLabel(network), outcome).observe(seconds);
}

export function countSubscriptionTurnedOff(reason: "gone" | "failing"): void {
  metrics.turnedOff.inc({ reason });
}

/**
 * What the due-queue gauges read at each scrape, until the returned function is called (a delivery
 * worker's query, lib/webhooks/delivery/store.ts): one at a time, given up after QUEUE_WAIT_MS.
 */
export function trackQueue(source: () => Promise<QueueStats>): () => void {
  metrics.queue.sources.add(source);
  return () => void metrics.queue.sources.delete(source);
}

/** Observes a flush of buffered writes (`ok` false: it failed). */
export function observeFlush(store: FlushStore, seconds: number, ok: boolean): void {
  metrics.flushes.get(store).observe(seconds);
  if (!ok) metrics.flushFailures.inc({ store });
}

/** The process's limits mode, as lib/limits/shared.ts announces it. */
export function reportLimitsMode(mode: "shared" | "local"): void {
  metrics.limits.mode = mode;
}
