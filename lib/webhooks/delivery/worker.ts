/**
 * The webhook delivery worker: claims due messages (lib/webhooks/delivery/store.ts), POSTs each to
 * its receiver signed (lib/webhooks/signing.ts), records every attempt, and schedules retries.
 * Any number run at once, in one process or many: they share messages through their claims.
 *
 * - A slow or dead receiver delays no one else: at most WEBHOOK_DELIVERY_PER_HOST deliveries per
 *   receiver host (host:port; each test inbox of this service counts as its own) are in flight in
 *   a process, and claims skip hosts at that bound, so the other WEBHOOK_DELIVERY_CONCURRENCY -
 *   PER_HOST slots keep serving other receivers.
 * - Within a receiver, subscriptions take turns: claims walk the subscriptions round robin
 *   (lib/webhooks/delivery/store.ts claimSql), and a host's claimed messages wait per subscription
 *   and are sent one subscription after the other, so a fresh message of a quiet subscription goes
 *   out at one of the next free slots, not behind another subscription's backlog.
 * - Any 2xx is a success: the message is SUCCESS, its subscription's failure run ends, and the
 *   project is charged WEBHOOK_DELIVERY_CU once through the process's usage meter, as the
 *   subscription's usage (not for a message the user asked for: that was charged as it was queued).
 * - Anything else (3xx included, no answer, a URL refused at delivery time) is retried on the
 *   schedule (lib/webhooks/delivery/schedule.ts), later when Retry-After says so; after the last
 *   retry the message is FAIL. 410 Gone turns the subscription off at once; so does failing
 *   continuously for 5 days. Either way its pending messages fail, and the reason is shown.
 * - Messages of a subscription that is off (by its owner or by the service) are not sent: they fail
 *   when due, with no attempt recorded (nothing was sent). Test messages the owner asked for are
 *   sent even then.
 * - Idle, a worker looks for due messages every WEBHOOK_DELIVERY_POLL_MS, and at once when the
 *   outbox announces some (lib/webhooks/outbox.ts MESSAGES_DUE_CHANNEL, heard through LISTEN).
 * - stop() finishes the attempts in flight (each bounded by the timeout); stop({ abandon: true })
 *   gives them up unrecorded, as a crash would: their messages come back when their lease ends.
 */
import { setMaxListeners } from "node:events";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { setImmediate } from "node:timers/promises";
import { listen } from "@/lib/db/listen";
import { databaseUrl, getEnv } from "@/lib/env";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { meter as processMeter, type UsageMeter } from "@/lib/usage/meter";
import { startWorker, type WorkerHandle } from "@/lib/workers/worker";
import { WEBHOOK_DELIVERY_CU, webhookUsageLabel } from "../catalog";
import { MESSAGES_DUE_CHANNEL } from "../outbox";
import { HISTORY_RETENTION_DAYS, sweepWebhookHistory } from "../service";
import { decryptSigningKey } from "../signing-key";
import { signatureHeaders } from "../signing";
import type { DeliveryTarget } from "../url-guard";
import { nextAttemptAt, retryAfterMs } from "./schedule";
import { DeliveryClient } from "./send";
import {
  CLAIM_MAX,
  claimDue,
  failUnsent,
  inboxAuthority,
  releaseClaims,
  recordFailure,
  recordSuccesses,
  type AttemptRecord,
  type ClaimedMessage,
  type FailureOutcome,
} from "./store";

/** A subscription whose deliveries all failed for this long is turned off. */
export const DEACTIVATE_AFTER_MS = 5 * 24 * 3600_000;
/**
 * Rounds of deliveries a worker holds per receiver host: perHost in flight and the next two rounds
 * claimed and waiting, so the host does not wait for a claim to reach the database, even when a
 * claim takes as long as a round (a busy database; with one round waiting, a fast receiver sat
 * idle at every claim). (Waiting messages count against WEBHOOK_DELIVERY_CONCURRENCY: a hung host
 * holds at most this many rounds.)
 */
const HELD_ROUNDS = 3;
/** Time a lease allows beyond its attempts: to claim, to record the attempt, and event-loop delays. */
export const LEASE_MARGIN_MS = 30_000;

/**
 * How long a claim holds its messages. A claimed message is sent at once or waits for the attempts
 * ahead of it on its host: with HELD_ROUNDS rounds of perHost held per host, it waits for at most
 * HELD_ROUNDS - 1 attempts, then its own runs, each ending within timeoutMs of its start (one
 * deadline covers the whole attempt: lib/webhooks/delivery/send.ts). So its attempt is over within
 * HELD_ROUNDS × timeoutMs of the claim, and recorded within the margin after that: the lease
 * ends later, and no other worker claims the message while its attempt may still be in flight.
 */
export function leaseMs(timeoutMs: number, marginMs: number): number {
  return HELD_ROUNDS * timeoutMs + marginMs;
}
const RETENTION_EVERY_MS = 3600_000;
const SIGNING_KEYS_KEPT = 10_000;

export interface DeliveryOptions {
  /** Default WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  /** Default WEBHOOK_RETRY_SCHEDULE_MS. */
  retryScheduleMs: readonly number[];
  /** Default WEBHOOK_DELIVERY_CONCURRENCY. */
  concurrency: number;
  /** Default WEBHOOK_DELIVERY_PER_HOST. */
  perHost: number;
  /** Default WEBHOOK_DELIVERY_POLL_MS. */
  pollMs: number;
  leaseMarginMs: number;
  deactivateAfterMs: number;
  /** Default: the process's meter (lib/usage/meter.ts). */
  meter: UsageMeter;
  /** Run the 30-day history sweep (one process in a cluster at a time). Default true. */
  retention: boolean;
  logger: Logger;
  /** Only these projects' messages (tests and benchmarks that share a database); default all. */
  projectIds?: readonly string[];
  /** Default: lib/webhooks/url-guard.ts resolveDeliveryTarget with the configured policy. */
  resolve?: (url: string) => Promise<DeliveryTarget>;
}

export interface DeliveryWorker {
  /** Deliveries in flight now. */
  readonly inFlight: number;
  /** Settles once the worker listens for the outbox's announcements (or its first attempt failed: it polls meanwhile). */
  readonly listening: Promise<void>;
  /** Stops claiming; waits for attempts in flight, or gives them up unrecorded with `abandon`. */
  stop(options?: { abandon?: boolean }): Promise<void>;
}

function defaults(): Omit<DeliveryOptions, "resolve" | "projectIds"> {
  const env = getEnv();
  return {
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE_MS,
    concurrency: env.WEBHOOK_DELIVERY_CONCURRENCY,
    perHost: env.WEBHOOK_DELIVERY_PER_HOST,
    pollMs: env.WEBHOOK_DELIVERY_POLL_MS,
    leaseMarginMs: LEASE_MARGIN_MS,
    deactivateAfterMs: DEACTIVATE_AFTER_MS,
    meter: processMeter(),
    retention: true,
    logger: componentLogger("webhook-delivery"),
  };
}

export function startDelivery(overrides: Partial<DeliveryOptions> = {}): DeliveryWorker {
  const o: DeliveryOptions = { ...defaults(), ...overrides };
  const log = o.logger;
  const perHost = Math.min(o.perHost, o.concurrency);
  const client = new DeliveryClient(perHost, o.resolve);
  const abandon = new AbortController();
  // Each attempt in flight listens for it (send.ts): as many as the concurrency, not a leak.
  setMaxListeners(o.concurrency + 10, abandon.signal);
  const inFlight = new Set<Promise<void>>();
  /**
   * Per receiver host: deliveries waiting for its answer (at most perHost), and claimed messages
   * waiting for one of those to end (at most (HELD_ROUNDS - 1) × perHost more: the next round
   * is at hand without a claim, and waits at most that many attempts, which the lease covers).
   */
  const hosts = new Map<string, HostQueue>();
  let queued = 0;
  const successes = new SuccessRecorder();
  let slotFreed: (() => void) | undefined;
  /** Deliveries ended so far (their receiver answered or the attempt gave up). */
  let ended = 0;
  /** The outbox announced due messages since the last claim began. */
  let announced = false;
  /** Where the next claim's walk over subscriptions starts (claimDue). */
  let cursor = "";
  const inboxes = inboxAuthority(getEnv().PUBLIC_URL);
  /** Decrypted signing keys by ciphertext: a key is decrypted once per worker, not per message. */
  const keys = new Map<string, string>();
  const signingKeyOf = (ciphertext: string) => {
    let key = keys.get(ciphertext);
    if (key === undefined) {
      if (keys.size >= SIGNING_KEYS_KEPT) keys.delete(keys.keys().next().value!);
      keys.set(ciphertext, (key = decryptSigningKey(ciphertext)));
    }
    return key;
  };

  /** One attempt; `answered` is called once the exchange with the receiver is over, before recording. */
  const deliver = async (m: ClaimedMessage, answered: () => void): Promise<void> => {
    const startedAt = new Date();
    const t0 = performance.now();
    const body = m.body;
    const res = await client.send({
      receiver: m.host,
      url: m.webhookUrl,
      body,
      headers: signatureHeaders(signingKeyOf(m.signingKey), m.id, body, startedAt),
      timeoutMs: o.timeoutMs,
      signal: abandon.signal,
    });
    answered();
    if (res.abandoned) return;
    const success = res.httpStatus !== null && res.httpStatus >= 200 && res.httpStatus < 300;
    const attempt = {
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      httpStatus: res.httpStatus,
      success,
      error: res.error,
      responseBody: res.responseBody,
      requestHeaders: res.requestHeaders,
    };
    if (success) {
      if (await successes.add(m, attempt)) {
        o.meter.record({
          projectId: m.projectId,
          keyId: "",
          subscriptionId: m.subscriptionId,
          network: m.network,
          // Under the webhook API's interface, with the receiver's answer time as the latency.
          api: "v1",
          endpoint: webhookUsageLabel("delivery"),
          status: "2xx",
          cu: WEBHOOK_DELIVERY_CU,
          error: false,
          latencyMs: attempt.durationMs,
        });
      }
      return;
    }
    let outcome: FailureOutcome;
    if (res.httpStatus === 410) outcome = { kind: "gone" };
    else {
      const at = nextAttemptAt(o.retryScheduleMs, m.attempts + 1, Date.now(), retryAfterMs(res.retryAfter));
      outcome = at ? { kind: "retry", at } : { kind: "fail" };
    }
    const reason = await recordFailure(m, attempt, outcome, o.deactivateAfterMs);
    if (reason) log.info({ subscriptionId: m.subscriptionId, projectId: m.projectId }, `webhook subscription turned off: ${reason}`);
  };

  const start = (m: ClaimedMessage) => {
    const host = hosts.get(m.host)!;
    host.sending++;
    // The host's slot is free once the receiver answered; the process's, once the attempt is recorded.
    let answered = false;
    const releaseHost = () => {
      if (answered) return;
      answered = true;
      ended++;
      host.sending--;
      const next = host.shift();
      if (next) {
        queued--;
        start(next);
      } else if (host.sending === 0) hosts.delete(m.host);
      slotFreed?.();
    };
    const running: Promise<void> = deliver(m, releaseHost)
      .catch((e: unknown) => {
        // The attempt's outcome could not be recorded (the database is away): the message is
        // claimed again when its lease ends.
        log.warn({ messageId: m.id }, `could not record a delivery attempt; the message is retried when its lease ends: ${errorMessage(e)}`);
      })
      .finally(() => {
        releaseHost();
        inFlight.delete(running);
        slotFreed?.();
      });
    inFlight.add(running);
  };

  /** Queues a claim's messages on their hosts, then sends what the hosts' free slots allow, round robin. */
  const dispatch = (claimed: readonly ClaimedMessage[]) => {
    for (const m of claimed) {
      let host = hosts.get(m.host);
      if (!host) hosts.set(m.host, (host = new HostQueue()));
      host.push(m);
      queued++;
    }
    if (stopping) return;
    for (const host of new Set(claimed.map((m) => hosts.get(m.host)!))) {
      while (host.sending < perHost && host.waiting > 0) {
        queued--;
        start(host.shift()!);
      }
    }
  };

  /** Claimed messages not started yet, taken out of the queues. */
  const takeQueued = (): ClaimedMessage[] => {
    const out: ClaimedMessage[] = [];
    for (const host of hosts.values()) out.push(...host.drain());
    queued = 0;
    return out;
  };
  let stopping = false;

  /** Resolves when a delivery ends (a slot is free), after `timeoutMs` if given, or on abort. */
  const waitForSlot = (signal: AbortSignal, timeoutMs?: number) =>
    new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(), timeoutMs);
      const done = () => {
        clearTimeout(timer);
        slotFreed = undefined;
        signal.removeEventListener("abort", done);
        resolve();
      };
      slotFreed = done;
      signal.addEventListener("abort", done, { once: true });
    });

  const worker = startWorker<null>({
    kind: "webhook-delivery",
    key: `${os.hostname()}:${process.pid}`,
    logger: log,
    init: async () => null,
    step: async (_state, ctx) => {
      const free = o.concurrency - inFlight.size - queued;
      if (free <= 0) {
        await waitForSlot(ctx.signal);
        return 0;
      }
      const held = new Map([...hosts].map(([h, x]) => [h, x.sending + x.waiting]));
      const fullHosts = [...held].filter(([, n]) => n >= HELD_ROUNDS * perHost).map(([h]) => h);
      announced = false;
      const endedBefore = ended;
      const claim = await claimDue({
        max: free,
        perHost: HELD_ROUNDS * perHost,
        busy: held,
        fullHosts,
        leaseMs: leaseMs(o.timeoutMs, o.leaseMarginMs),
        cursor,
        inboxAuthority: inboxes,
        projectIds: o.projectIds,
      });
      cursor = claim.cursor;
      const claimed = claim.messages;
      await failUnsent(claimed.filter((m) => !m.isActive && !m.test));
      dispatch(claimed.filter((m) => m.isActive || m.test));
      if (claimed.length >= Math.min(free, CLAIM_MAX)) return 0;
      // The claim found less than it could take: nothing more is due, or the hosts of what is due
      // are at their bounds. Look again after the poll interval, or once half a round of
      // deliveries (perHost / 2) has ended, letting the deliveries ending meanwhile end together:
      // one claim then takes half a round's worth, rather than one claim per delivery that ends,
      // while the other half still waits to be sent. Messages announced as due end the wait at once.
      // Deliveries count from the claim's start: those that ended while it ran (all of a host's,
      // when the database is slow) already freed room.
      const until = performance.now() + o.pollMs;
      const halfRound = Math.ceil(perHost / 2);
      for (let left = o.pollMs; left > 0 && ended - endedBefore < halfRound && !announced && !ctx.signal.aborted; left = until - performance.now()) {
        await waitForSlot(ctx.signal, left);
      }
      await setImmediate();
      return 0;
    },
    classify: () => ({ what: "could not claim webhook messages" }),
  });

  const retention = o.retention ? startRetention(log) : undefined;
  const url = databaseUrl();
  const announcements = url
    ? listen({
        connectionString: url,
        channel: MESSAGES_DUE_CHANNEL,
        name: "webhook delivery",
        onNotification: () => {
          announced = true;
          slotFreed?.();
        },
        onLost: (e) => log.warn(`not hearing of new webhook messages (${errorMessage(e)}); they are found by polling every ${o.pollMs} ms until the connection is back`),
        onListening: (afterOutage) => {
          if (afterOutage) log.info("hearing of new webhook messages again");
        },
      })
    : undefined;

  let stopped: Promise<void> | undefined;
  return {
    get inFlight() {
      return inFlight.size;
    },
    listening: announcements?.ready ?? Promise.resolve(),
    stop(options = {}) {
      stopped ??= (async () => {
        await Promise.all([worker.stop(), retention?.stop(), announcements?.stop()]);
        stopping = true;
        if (options.abandon) abandon.abort();
        else {
          // Claimed but not started: due again at once, for another worker.
          await releaseClaims(takeQueued()).catch((e: unknown) => log.warn(`could not hand back claimed webhook messages; they are retried when their lease ends: ${errorMessage(e)}`));
        }
        takeQueued();
        while (inFlight.size > 0) await Promise.all([...inFlight]);
        await client.close();
      })();
      return stopped;
    },
  };
}

/**
 * A receiver host's deliveries: how many are in flight, and the claimed messages waiting for a
 * slot, per subscription, taken one subscription after the other (round robin): a subscription
 * with a backlog waits its turn behind each other subscription's next message.
 */
class HostQueue {
  sending = 0;
  waiting = 0;
  /** Insertion order is the turn order: a subscription served goes to the back. */
  private subscriptions = new Map<string, ClaimedMessage[]>();

  push(m: ClaimedMessage): void {
    const queue = this.subscriptions.get(m.subscriptionId);
    if (queue) queue.push(m);
    else this.subscriptions.set(m.subscriptionId, [m]);
    this.waiting++;
  }

  shift(): ClaimedMessage | undefined {
    const first = this.subscriptions.entries().next();
    if (first.done) return undefined;
    const [id, queue] = first.value;
    const m = queue.shift()!;
    this.subscriptions.delete(id);
    if (queue.length > 0) this.subscriptions.set(id, queue);
    this.waiting--;
    return m;
  }

  drain(): ClaimedMessage[] {
    const all = [...this.subscriptions.values()].flat();
    this.subscriptions.clear();
    this.waiting = 0;
    return all;
  }
}

/**
 * Successful attempts are recorded together: those that end within SUCCESS_BATCH_MS of the first,
 * or while a write is in progress, go in one statement, so the database sees one statement per
 * batch rather than one per message. (The receiver's slot is free before: see `answered`.)
 */
const SUCCESS_BATCH_MS = 10;

class SuccessRecorder {
  private queue: { m: ClaimedMessage; a: AttemptRecord; resolve: (held: boolean) => void; reject: (e: unknown) => void }[] = [];
  private writing = false;

  /** Resolves true when the message was still this worker's, is now SUCCESS, and is to be charged (recordSuccesses). */
  add(m: ClaimedMessage, a: AttemptRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ m, a, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        setTimeout(() => void this.write(), SUCCESS_BATCH_MS);
      }
    });
  }

  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, 1000);
      try {
        const charged = await recordSuccesses(batch);
        for (const b of batch) b.resolve(charged.has(b.m.id));
      } catch (e) {
        for (const b of batch) b.reject(e);
      }
    }
    this.writing = false;
  }
}

/** Deletes history older than 30 days, hourly, in one process of the cluster (an advisory lock). */
function startRetention(log: Logger): WorkerHandle | undefined {
  const url = databaseUrl();
  if (!url) return undefined;
  return startWorker<null>({
    kind: "webhook-retention",
    key: "all",
    leader: { databaseUrl: url },
    logger: log.child({ task: "retention" }),
    init: async () => null,
    step: async () => {
      const swept = await sweepWebhookHistory(new Date(Date.now() - HISTORY_RETENTION_DAYS * 86_400_000));
      if (swept.attempts + swept.messages > 0) log.info(swept, `deleted webhook history older than ${HISTORY_RETENTION_DAYS} days`);
      return RETENTION_EVERY_MS;
    },
    classify: () => ({ what: "webhook history sweep failed", level: "warn" }),
  });
}
