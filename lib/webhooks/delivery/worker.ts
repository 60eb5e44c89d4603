/**
 * The webhook delivery worker: claims due messages (lib/webhooks/delivery/store.ts), POSTs each to
 * its receiver signed (lib/webhooks/signing.ts), records every attempt, and schedules retries.
 * Any number run at once, in one process or many: they share messages through their claims.
 *
 * - A slow or dead receiver delays no one else: at most WEBHOOK_DELIVERY_PER_HOST deliveries per
 *   receiver host (host:port; each test inbox of this service counts as its own) are in flight,
 *   all workers of the cluster together, and claims skip hosts at that bound, so the other
 *   WEBHOOK_DELIVERY_CONCURRENCY - PER_HOST slots keep serving other receivers.
 * - How the cluster holds that bound (the leases in the database say who holds what:
 *   lib/webhooks/delivery/store.ts claimSql): a worker sends at most perHost of what it holds for
 *   a host at once, and each claim, in its turn on the host, counts the other workers' live leases
 *   there. Finding none, it may hold HELD_ROUNDS rounds, as a worker alone does (all in flight
 *   there is its own: at most perHost). Finding some, it tops up only to perHost held by all
 *   together, its own included. So together they never send more than perHost. A busy host stays
 *   with the one worker serving it, with rounds claimed ahead (HELD_ROUNDS: see there): it refills
 *   before it runs dry, and the others find the host taken and serve other hosts. A host is
 *   shared only once its holder holds less than a round, until one of the holders runs dry. No
 *   Redis: a semaphore there would be a second record of what the leases say, with a guessed share
 *   per process while Redis is away, and a round trip per delivery; the claim stays one
 *   statement. A worker that dies keeps its host's room until its cluster member is seen dead
 *   (MEMBER_LIVE_MS after its last heartbeat), or, outside a cluster member, until its leases end.
 * - A worker starts an attempt only while, by its own monotonic clock, the message's lease leaves
 *   room for the whole attempt, and its member stayed live since the claim (so its leases counted
 *   all along: lib/cluster/members.ts liveSince); it claims only while live. Otherwise it hands the
 *   message back. A process frozen (SIGSTOP, a stalled VM) and woken up therefore sends nothing it
 *   held: another worker may have taken those messages over, or filled their hosts meanwhile.
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
import type { ClusterMembership } from "@/lib/cluster/members";
import { listen } from "@/lib/db/listen";
import { databaseUrl, getEnv } from "@/lib/env";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { countDelivery, countSubscriptionTurnedOff, trackQueue, type DeliveryOutcome } from "@/lib/metrics";
import { services } from "@/lib/services";
import { linksTo, SpanKind, SpanStatusCode, withSpan, type Attributes, type Span } from "@/lib/tracing";
import type { UsageMeter } from "@/lib/usage/meter";
import { startWorker } from "@/lib/workers/worker";
import { WEBHOOK_DELIVERY_CU, webhookUsageLabel } from "../catalog";
import { MESSAGES_DUE_CHANNEL } from "../outbox";
import { decryptSigningKey } from "../signing-key";
import { signatureHeaders } from "../signing";
import type { DeliveryTarget } from "../url-guard";
import { nextAttemptAt, retryAfterMs } from "./schedule";
import { DeliveryClient, type SendRequest } from "./send";
import {
  CLAIM_MAX,
  claimDue,
  dueQueue,
  failUnsent,
  inboxAuthority,
  leaseHolder,
  recordFailure as writeFailure,
  recordSuccesses,
  releaseClaims,
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
 * Should its turn come later all the same (the process was frozen), it is handed back (Delivery.startable).
 */
export function leaseMs(timeoutMs: number, marginMs: number): number {
  return HELD_ROUNDS * timeoutMs + marginMs;
}
const SIGNING_KEYS_KEPT = 10_000;

/** Decrypted signing keys by ciphertext: a key is decrypted once per worker, not per message. */
class SigningKeys {
  private readonly keys = new Map<string, string>();

  of(ciphertext: string): string {
    let key = this.keys.get(ciphertext);
    if (key === undefined) {
      if (this.keys.size >= SIGNING_KEYS_KEPT) this.keys.delete(this.keys.keys().next().value!);
      this.keys.set(ciphertext, (key = decryptSigningKey(ciphertext)));
    }
    return key;
  }
}

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
  logger: Logger;
  /** Only these projects' messages (tests and benchmarks that share a database); default all. */
  projectIds?: readonly string[];
  /** Default: lib/webhooks/url-guard.ts resolveDeliveryTarget with the configured policy. */
  resolve?: (url: string) => Promise<DeliveryTarget>;
  /**
   * The cluster member this worker runs in (lib/runtime.ts): its leases count against their
   * receivers while the member is live. Without one (tests, benchmarks) they count until they end.
   */
  member?: Pick<ClusterMembership, "id" | "liveSince">;
}

export interface DeliveryWorker {
  /** Deliveries in flight now. */
  readonly inFlight: number;
  /** Settles once the worker listens for the outbox's announcements (or its first attempt failed: it polls meanwhile). */
  readonly listening: Promise<void>;
  /** Stops claiming; waits for attempts in flight, or gives them up unrecorded with `abandon`. */
  stop(options?: { abandon?: boolean }): Promise<void>;
}

function defaults(): Omit<DeliveryOptions, "resolve" | "projectIds" | "member"> {
  const env = getEnv();
  return {
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE_MS,
    concurrency: env.WEBHOOK_DELIVERY_CONCURRENCY,
    perHost: env.WEBHOOK_DELIVERY_PER_HOST,
    pollMs: env.WEBHOOK_DELIVERY_POLL_MS,
    leaseMarginMs: LEASE_MARGIN_MS,
    deactivateAfterMs: DEACTIVATE_AFTER_MS,
    meter: services().meter,
    logger: componentLogger("webhook-delivery"),
  };
}

export function startDelivery(overrides: Partial<DeliveryOptions> = {}): DeliveryWorker {
  const o: DeliveryOptions = { ...defaults(), ...overrides };
  const log = o.logger;
  const delivery = new Delivery(o);
  const worker = startWorker<null>({
    kind: "webhook-delivery",
    key: `${os.hostname()}:${process.pid}`,
    logger: log,
    init: async () => null,
    step: (_state, ctx) => delivery.step(ctx.signal),
    classify: () => ({ what: "could not claim webhook messages" }),
  });
  const untrackQueue = trackQueue(dueQueue);
  const url = databaseUrl();
  const announcements = url
    ? listen({
        connectionString: url,
        channel: MESSAGES_DUE_CHANNEL,
        name: "webhook delivery",
        onNotification: () => delivery.announced(),
        onLost: (e) => log.warn(`not hearing of new webhook messages (${errorMessage(e)}); they are found by polling every ${o.pollMs} ms until the connection is back`),
        onListening: (afterOutage) => {
          if (afterOutage) log.info("hearing of new webhook messages again");
        },
      })
    : undefined;

  let stopped: Promise<void> | undefined;
  return {
    get inFlight() {
      return delivery.inFlight;
    },
    listening: announcements?.ready ?? Promise.resolve(),
    stop(options = {}) {
      stopped ??= (async () => {
        untrackQueue();
        await Promise.all([worker.stop(), announcements?.stop()]);
        await delivery.stop(options.abandon ?? false);
      })();
      return stopped;
    },
  };
}

/**
 * What the span of a delivery attempt says: `webhook.message_id`, as the span that queued the
 * message (which it links to), and the receiver by host and port (its URL's path may hold a token).
 */
function attemptAttributes(m: ClaimedMessage): Attributes {
  let receiver: Attributes = {};
  try {
    const url = new URL(m.webhookUrl);
    receiver = { "server.address": url.hostname, "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)) };
  } catch {
    // Not a URL: the attempt fails as unsendable, and its span says so.
  }
  return {
    "webhook.message_id": m.id,
    "webhook.subscription_id": m.subscriptionId,
    "webhook.attempt": m.attempts + 1,
    "blockgate.project_id": m.projectId,
    "blockgate.network": m.network,
    ...(m.test ? { "webhook.test": true } : {}),
    "http.request.method": "POST",
    ...receiver,
  };
}

/** The attempt's outcome on its span: success, failure (why: the history's text) or abandoned, and the receiver's status. */
function traceOutcome(span: Span, sent: SentDelivery): void {
  span.setAttribute("webhook.outcome", sent.kind);
  if (sent.kind === "abandoned") return;
  if (sent.attempt.httpStatus !== null) span.setAttribute("http.response.status_code", sent.attempt.httpStatus);
  if (sent.kind === "failure") span.setStatus({ code: SpanStatusCode.ERROR, message: sent.attempt.error ?? "failed" });
}

/** A claimed message made ready to send: its signed request, and when its attempt began. */
interface PreparedDelivery {
  message: ClaimedMessage;
  request: SendRequest;
  startedAt: Date;
  /** performance.now() at startedAt: the attempt's duration counts from it. */
  t0: number;
}

/** What the receiver made of an attempt (unless the attempt was given up: `abandoned`). */
type SentDelivery =
  | { kind: "abandoned" }
  | { kind: "success"; message: ClaimedMessage; attempt: AttemptRecord }
  | { kind: "failure"; message: ClaimedMessage; attempt: AttemptRecord; retryAfter: string | undefined };

/**
 * One worker's deliveries, as phases with typed states between them, in the manner of Svix's
 * worker: claim (due messages, the unsendable ones failed) → prepare (sign) → send → record
 * success (and charge) / record failure (schedule the next attempt, fail the message, or turn the
 * subscription off). What the worker holds between steps is DeliveryState's alone.
 */
class Delivery {
  private readonly state: DeliveryState;
  private readonly perHost: number;
  private readonly client: DeliveryClient;
  private readonly abandon = new AbortController();
  private readonly successes = new SuccessRecorder();
  private readonly signingKeys = new SigningKeys();
  private readonly inboxes = inboxAuthority(getEnv().PUBLIC_URL);
  /** The leases' holder: for this worker alone (a process may run several; one that restarts is another). */
  private readonly holder: string;
  private readonly leaseMs: number;

  constructor(private readonly o: DeliveryOptions) {
    this.perHost = Math.min(o.perHost, o.concurrency);
    this.client = new DeliveryClient(this.perHost, o.resolve);
    this.holder = leaseHolder(o.member?.id);
    this.leaseMs = leaseMs(o.timeoutMs, o.leaseMarginMs);
    // Each attempt in flight listens for it (send.ts): as many as the concurrency, not a leak.
    setMaxListeners(o.concurrency + 10, this.abandon.signal);
    this.state = new DeliveryState(this.perHost, {
      deliver: (m, answered) =>
        withSpan("webhook.attempt", () => attemptAttributes(m), (span) => this.deliver(m, answered, span), { kind: SpanKind.CONSUMER, links: () => linksTo([m.traceParent]) }),
      startable: (claimedAt) => this.startable(claimedAt),
      handBack: (messages) => this.handBack(messages),
    });
  }

  /** Attempts in flight (sending, or recording what the receiver answered). */
  get inFlight(): number {
    return this.state.inFlight;
  }

  /** The outbox announced due messages: a step waiting for news claims at once. */
  announced(): void {
    this.state.announced();
  }

  /**
   * One step of the worker: claims what there is room for and hands it to the hosts' queues. When
   * the claim found less than it could take (nothing more is due, or the hosts of what is due are
   * at their bounds), waits for the poll interval, or until half a round of deliveries (perHost /
   * 2) has ended, letting the deliveries ending meanwhile end together: one claim then takes half
   * a round's worth, rather than one claim per delivery that ends, while the other half still
   * waits to be sent. Messages announced as due end the wait at once. Deliveries count from the
   * claim's start: those that ended while it ran (all of a host's, when the database is slow)
   * already freed room.
   */
  async step(signal: AbortSignal): Promise<number> {
    const free = this.state.free(this.o.concurrency);
    if (free <= 0) {
      await this.state.waitForSlot(signal);
      return 0;
    }
    const endedBefore = this.state.claimStarts();
    // Not live, its leases would not count: what it claimed it could not send.
    const claimed = this.o.member && !this.o.member.liveSince(performance.now()) ? 0 : await this.claim(free);
    if (claimed >= Math.min(free, CLAIM_MAX)) return 0;
    await this.state.waitForNews(endedBefore, Math.ceil(this.perHost / 2), this.o.pollMs, signal);
    await setImmediate();
    return 0;
  }

  /**
   * claim: up to `free` due messages, at most HELD_ROUNDS rounds per host held (one round for all
   * workers together where others hold some: see the module comment); those of a
   * subscription that is off fail unsent (test messages are sent all the same), the others go to
   * their hosts' queues. Answers how many were claimed.
   */
  private async claim(free: number): Promise<number> {
    const { busy, fullHosts } = this.state.held(HELD_ROUNDS * this.perHost);
    const claimedAt = performance.now();
    const claim = await claimDue({
      max: free,
      perHost: this.perHost,
      heldPerHost: HELD_ROUNDS * this.perHost,
      busy,
      fullHosts,
      leaseMs: this.leaseMs,
      holder: this.holder,
      cursor: this.state.cursor,
      inboxAuthority: this.inboxes,
      projectIds: this.o.projectIds,
    });
    this.state.cursor = claim.cursor;
    const claimed = claim.messages;
    await failUnsent(claimed.filter((m) => !m.isActive && !m.test));
    this.state.dispatch(claimed.filter((m) => m.isActive || m.test), claimedAt);
    return claimed.length;
  }

  /**
   * Whether a message claimed at `claimedAt` (performance.now() as the claim began: its lease, on
   * the database's clock, began later) may be sent now: its attempt, bounded by the timeout, ends
   * with half the margin of its lease left to record it, and this worker's member stayed live
   * since the claim. A message waits at most HELD_ROUNDS - 1 attempts (leaseMs), so only a process
   * frozen, or a member seen dead, meanwhile finds one that may not.
   */
  private startable(claimedAt: number): boolean {
    const startBy = claimedAt + this.leaseMs - this.o.leaseMarginMs / 2 - this.o.timeoutMs;
    return performance.now() <= startBy && (this.o.member?.liveSince(claimedAt) ?? true);
  }

  /** Messages it may no longer send (startable): handed back. Never rejects. */
  private handBack(messages: readonly ClaimedMessage[]): Promise<void> {
    this.o.logger.warn(
      { messages: messages.length },
      "handing back claimed webhook messages not sent in time: their lease ran out while they waited, or this process was not seen live meanwhile (was it frozen, or its event loop blocked?)",
    );
    return this.release(messages);
  }

  /** Claimed messages it will not send: due again at once, for any worker. Never rejects. */
  private async release(messages: readonly ClaimedMessage[]): Promise<void> {
    await releaseClaims(messages).catch((e: unknown) => this.o.logger.warn(`could not hand back claimed webhook messages; they are retried when their lease ends: ${errorMessage(e)}`));
  }

  /**
   * One message through its phases; `answered` is called once the exchange with the receiver is
   * over, before recording. Never rejects: an outcome that cannot be recorded (the database is
   * away) leaves the message to be claimed again when its lease ends. `span`: the attempt's.
   */
  private async deliver(m: ClaimedMessage, answered: () => void, span: Span): Promise<void> {
    try {
      const sent = await this.send(this.prepare(m));
      answered();
      traceOutcome(span, sent);
      if (sent.kind === "success") {
        await this.recordSuccess(sent.message, sent.attempt);
        countDelivery(m.network, "success", sent.attempt.durationMs / 1000);
      } else if (sent.kind === "failure") await this.recordFailure(sent.message, sent.attempt, sent.retryAfter);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: `not recorded: ${errorMessage(e)}` });
      this.o.logger.warn({ messageId: m.id }, `could not record a delivery attempt; the message is retried when its lease ends: ${errorMessage(e)}`);
    }
  }

  /** prepare: the request, with the body exactly as stored and its signatures of now. */
  private prepare(m: ClaimedMessage): PreparedDelivery {
    const startedAt = new Date();
    const t0 = performance.now();
    return {
      message: m,
      startedAt,
      t0,
      request: {
        receiver: m.host,
        url: m.webhookUrl,
        body: m.body,
        headers: signatureHeaders(this.signingKeys.of(m.signingKey), m.id, m.body, startedAt),
        timeoutMs: this.o.timeoutMs,
        signal: this.abandon.signal,
      },
    };
  }

  /** send: one attempt; any 2xx is a success, anything else (no answer included) a failure. */
  private async send(p: PreparedDelivery): Promise<SentDelivery> {
    const res = await this.client.send(p.request);
    if (res.abandoned) return { kind: "abandoned" };
    const success = res.httpStatus !== null && res.httpStatus >= 200 && res.httpStatus < 300;
    const attempt: AttemptRecord = {
      startedAt: p.startedAt,
      durationMs: Math.round(performance.now() - p.t0),
      httpStatus: res.httpStatus,
      success,
      error: res.error,
      responseBody: res.responseBody,
      requestHeaders: res.requestHeaders,
    };
    return success ? { kind: "success", message: p.message, attempt } : { kind: "failure", message: p.message, attempt, retryAfter: res.retryAfter };
  }

  /**
   * record success: the message is SUCCESS (batched with others: SuccessRecorder), and, unless it
   * was paid for as it was queued, its subscription's project is charged for it, under the
   * subscription, with the receiver's answer time as the latency.
   */
  private async recordSuccess(m: ClaimedMessage, attempt: AttemptRecord): Promise<void> {
    if (!(await this.successes.add(m, attempt))) return;
    this.o.meter.record({
      projectId: m.projectId,
      keyId: "",
      subscriptionId: m.subscriptionId,
      network: m.network,
      // Under the webhook API's interface.
      api: "v1",
      endpoint: webhookUsageLabel("delivery"),
      status: "2xx",
      cu: WEBHOOK_DELIVERY_CU,
      error: false,
      latencyMs: attempt.durationMs,
    });
  }

  /** record failure: the next attempt on the schedule (later if Retry-After says so), or the message failed, or (410 Gone, or failing for too long) the subscription turned off. */
  private async recordFailure(m: ClaimedMessage, attempt: AttemptRecord, retryAfter: string | undefined): Promise<void> {
    let outcome: FailureOutcome;
    if (attempt.httpStatus === 410) outcome = { kind: "gone" };
    else {
      const at = nextAttemptAt(this.o.retryScheduleMs, m.attempts + 1, Date.now(), retryAfterMs(retryAfter));
      outcome = at ? { kind: "retry", at } : { kind: "fail" };
    }
    const reason = await writeFailure(m, attempt, outcome, this.o.deactivateAfterMs);
    const counted: DeliveryOutcome = outcome.kind === "gone" ? "gone" : outcome.kind === "retry" && !reason ? "retry" : "failed";
    countDelivery(m.network, counted, attempt.durationMs / 1000);
    if (reason) {
      countSubscriptionTurnedOff(outcome.kind === "gone" ? "gone" : "failing");
      this.o.logger.info({ subscriptionId: m.subscriptionId, projectId: m.projectId }, `webhook subscription turned off: ${reason}`);
    }
  }

  /** Finishes the attempts in flight, or gives them up unrecorded with `abandon`; claimed messages not started are handed back. */
  async stop(abandon: boolean): Promise<void> {
    const queued = this.state.stop();
    if (abandon) this.abandon.abort();
    // Claimed but not started: due again at once, for another worker.
    else await this.release(queued);
    await this.state.settled();
    await this.client.close();
  }
}

/** What DeliveryState calls on: the phases of a delivery it starts, and the rule of when it may. */
interface DeliverySteps {
  /** Never rejects; calls `answered` once the receiver's part is over. */
  deliver(m: ClaimedMessage, answered: () => void): Promise<void>;
  /** Whether a message claimed at `claimedAt` (performance.now()) may be sent now. */
  startable(claimedAt: number): boolean;
  /** Gives up messages that may not (handed back); never rejects. */
  handBack(messages: readonly ClaimedMessage[]): Promise<void>;
}

/** A claimed message waiting for its turn, and when its claim began (performance.now()). */
interface Waiting {
  m: ClaimedMessage;
  claimedAt: number;
}

/**
 * What a delivery worker holds between its steps, changed only here: per receiver host, the
 * deliveries waiting for its answer (at most perHost) and the claimed messages waiting for one of
 * those to end (at most (HELD_ROUNDS - 1) × perHost more: the next round is at hand without a
 * claim, and waits at most that many attempts, which the lease covers; one whose turn comes too
 * late all the same is handed back); the attempts in flight (until recorded); and what the next
 * claim needs (where its walk starts, when to make it).
 */
class DeliveryState {
  /** Where the next claim's walk over subscriptions starts (claimDue). */
  cursor = "";
  private readonly hosts = new Map<string, HostQueue>();
  /** Claimed messages waiting in the hosts' queues. */
  private queued = 0;
  private readonly running = new Set<Promise<void>>();
  /** Messages found not startable in this turn of the event loop, handed back together at its end. */
  private late: ClaimedMessage[] = [];
  private readonly handingBack = new Set<Promise<void>>();
  /** Deliveries ended so far (their receiver answered or the attempt gave up). */
  private ended = 0;
  /** The outbox announced due messages since the last claim began. */
  private announcedDue = false;
  private stopping = false;
  /** Wakes the step waiting for a slot (waitForSlot), if one is. */
  private slotFreed: (() => void) | undefined;

  constructor(
    private readonly perHost: number,
    private readonly steps: DeliverySteps,
  ) {}

  /** Attempts in flight (sending, or recording what the receiver answered). */
  get inFlight(): number {
    return this.running.size;
  }

  /** Messages one more claim may take within `concurrency` (in flight and queued count). */
  free(concurrency: number): number {
    return concurrency - this.running.size - this.queued;
  }

  /** Messages held per host, and the hosts holding `bound` or more: what a claim leaves them. */
  held(bound: number): { busy: Map<string, number>; fullHosts: string[] } {
    const busy = new Map([...this.hosts].map(([h, x]) => [h, x.sending + x.waiting]));
    return { busy, fullHosts: [...busy].filter(([, n]) => n >= bound).map(([h]) => h) };
  }

  /** A claim begins: announcements from now on are news to the next wait. Answers the deliveries ended so far. */
  claimStarts(): number {
    this.announcedDue = false;
    return this.ended;
  }

  /** The outbox announced due messages. */
  announced(): void {
    this.announcedDue = true;
    this.slotFreed?.();
  }

  /** Queues the messages of a claim begun at `claimedAt` on their hosts, then sends what the hosts' free slots allow, round robin. */
  dispatch(claimed: readonly ClaimedMessage[], claimedAt: number): void {
    for (const m of claimed) {
      let host = this.hosts.get(m.host);
      if (!host) this.hosts.set(m.host, (host = new HostQueue()));
      host.push({ m, claimedAt });
      this.queued++;
    }
    if (this.stopping) return;
    for (const host of new Set(claimed.map((m) => this.hosts.get(m.host)!))) {
      while (host.sending < this.perHost && host.waiting > 0) {
        const next = this.next(host);
        if (next) this.start(next);
      }
    }
  }

  /** The host's next message to send, if any; those before it that may no longer be sent are handed back. */
  private next(host: HostQueue): ClaimedMessage | undefined {
    for (let w = host.shift(); w; w = host.shift()) {
      this.queued--;
      if (this.steps.startable(w.claimedAt)) return w.m;
      if (this.late.push(w.m) === 1) queueMicrotask(() => this.handBackLate());
    }
    return undefined;
  }

  private handBackLate(): void {
    const handing = this.steps.handBack(this.late.splice(0)).finally(() => this.handingBack.delete(handing));
    this.handingBack.add(handing);
  }

  private start(m: ClaimedMessage): void {
    const host = this.hosts.get(m.host)!;
    host.sending++;
    // The host's slot is free once the receiver answered; the process's, once the attempt is recorded.
    let answered = false;
    const releaseHost = () => {
      if (answered) return;
      answered = true;
      this.ended++;
      host.sending--;
      const next = this.next(host);
      if (next) this.start(next);
      else if (host.sending === 0) this.hosts.delete(m.host);
      this.slotFreed?.();
    };
    const running: Promise<void> = this.steps.deliver(m, releaseHost).finally(() => {
      releaseHost();
      this.running.delete(running);
      this.slotFreed?.();
    });
    this.running.add(running);
  }

  /** Resolves when a delivery ends (a slot is free) or messages are announced, after `timeoutMs` if given, or on abort. */
  waitForSlot(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(), timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.slotFreed = undefined;
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.slotFreed = done;
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Waits up to `pollMs`, until `enough` deliveries ended since `endedBefore` (claimStarts), messages were announced, or `signal` aborts. */
  async waitForNews(endedBefore: number, enough: number, pollMs: number, signal: AbortSignal): Promise<void> {
    const until = performance.now() + pollMs;
    for (let left = pollMs; left > 0 && this.ended - endedBefore < enough && !this.announcedDue && !signal.aborted; left = until - performance.now()) {
      await this.waitForSlot(signal, left);
    }
  }

  /** Starts nothing more: answers the claimed messages not started, taken out of the queues. */
  stop(): ClaimedMessage[] {
    this.stopping = true;
    const out: ClaimedMessage[] = [];
    for (const host of this.hosts.values()) out.push(...host.drain().map((w) => w.m));
    this.queued = 0;
    return out;
  }

  /** Resolves once no attempt is in flight, nor any message being handed back. */
  async settled(): Promise<void> {
    while (this.running.size + this.handingBack.size > 0) await Promise.all([...this.running, ...this.handingBack]);
  }
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
  private subscriptions = new Map<string, Waiting[]>();

  push(w: Waiting): void {
    const queue = this.subscriptions.get(w.m.subscriptionId);
    if (queue) queue.push(w);
    else this.subscriptions.set(w.m.subscriptionId, [w]);
    this.waiting++;
  }

  shift(): Waiting | undefined {
    const first = this.subscriptions.entries().next();
    if (first.done) return undefined;
    const [id, queue] = first.value;
    const m = queue.shift()!;
    this.subscriptions.delete(id);
    if (queue.length > 0) this.subscriptions.set(id, queue);
    this.waiting--;
    return m;
  }

  drain(): Waiting[] {
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
