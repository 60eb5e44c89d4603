/**
 * The delivery state in the database: claiming due messages, and recording what each attempt gave.
 *
 * A claim takes due PENDING messages (nextAttemptAt ≤ now) with FOR UPDATE SKIP LOCKED, so any
 * number of workers in any number of processes share them without a leader, and leases them: their
 * nextAttemptAt moves to the end of the lease (a few attempts' timeouts plus a margin: see worker.ts). A worker that
 * dies mid-delivery leaves its messages to be claimed again when their lease ends; one that records
 * an attempt checks that it still holds the lease (nextAttemptAt unchanged) before changing the
 * message, so a message is delivered twice only when an attempt was in flight as its worker died.
 *
 * The statements on the hot path (claim, release, success) go through node-postgres (rawPool())
 * rather than Prisma: one parsed and planned statement per batch, without the query compiler's
 * work per call.
 *
 * No statement here holds two row locks in an order another takes the other way round: a success
 * touches its message, then (separately) its subscription; a failure locks the subscription, then
 * its messages, as deleting a subscription does.
 */
import { db, rawPool } from "@/lib/db/client";
import { newId } from "@/lib/ids";

/** A claimed message, with what its delivery needs from the subscription. */
export interface ClaimedMessage {
  id: string;
  subscriptionId: string;
  projectId: string;
  network: string;
  /** Attempts recorded so far (the one about to be made is attempts + 1). */
  attempts: number;
  test: boolean;
  /** The body exactly as stored: the bytes that are sent and signed. */
  body: string;
  webhookUrl: string;
  /** Encrypted `whsec_…` (lib/webhooks/signing-key.ts). */
  signingKey: string;
  isActive: boolean;
  failingSince: Date | null;
  /** The receiver host the concurrency bounds count by: the URL's authority, lower case. */
  host: string;
  /** End of the lease: the message's nextAttemptAt while this worker holds it. */
  lease: Date;
}

/** The receiver host of a URL as the claim computes it in SQL (authority without credentials, lower case). */
const hostSql = (alias: string) => String.raw`lower(substring(${alias}.webhook_url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/?#]*)'))`;

export interface ClaimLimits {
  /** Messages to claim at most. */
  max: number;
  /** Deliveries a host may have in flight. */
  perHost: number;
  /** Deliveries in flight now, by host: the others get what is left of perHost. */
  busy: ReadonlyMap<string, number>;
  /** Hosts at perHost: their messages are skipped. */
  fullHosts: readonly string[];
  leaseMs: number;
  /** Only these projects' messages (tests and benchmarks sharing a database); default all. */
  projectIds?: readonly string[];
}

/** Due messages a claim locks and looks at, at most (it leases those within their hosts' bounds). */
export const CLAIM_SCAN = 64;

// Due messages are locked in index order (skipping rows other workers hold, and hosts that are
// full), ranked per host, and only those within each host's free slots are leased; the rest are
// unlocked when the statement ends. Skipping full hosts takes each scanned message's URL, so that
// join is made only when some host is full.
const claimSql = (skipHosts: boolean) => `WITH locked AS (
       SELECT m.id, m.subscription_id, m.next_attempt_at
       FROM webhook_messages m ${skipHosts ? "JOIN webhook_subscriptions f ON f.id = m.subscription_id" : ""}
       WHERE m.status = 'PENDING' AND m.next_attempt_at <= now()
         ${skipHosts ? `AND ${hostSql("f")} <> ALL($4::text[])` : "AND cardinality($4::text[]) = 0"}
         AND ($7::text[] IS NULL OR m.project_id = ANY($7::text[]))
       ORDER BY m.next_attempt_at
       LIMIT least($1, ${CLAIM_SCAN})
       FOR UPDATE OF m SKIP LOCKED
     ), ranked AS (
       SELECT l.id, l.next_attempt_at, h.host, row_number() OVER (PARTITION BY h.host ORDER BY l.next_attempt_at) AS rn
       FROM locked l JOIN webhook_subscriptions s ON s.id = l.subscription_id, LATERAL (SELECT ${hostSql("s")} AS host) h
     ), chosen AS (
       SELECT r.id, r.host FROM ranked r LEFT JOIN unnest($2::text[], $3::int[]) AS b(host, used) ON b.host = r.host
       WHERE r.rn <= $5 - coalesce(b.used, 0)
     )
     UPDATE webhook_messages m SET next_attempt_at = $6
     FROM chosen c, webhook_subscriptions s
     WHERE m.id = c.id AND s.id = m.subscription_id
     RETURNING m.id, m.subscription_id AS "subscriptionId", m.project_id AS "projectId", s.network, m.attempts, m.test,
       m.payload::text AS body, s.webhook_url AS "webhookUrl", s.signing_key AS "signingKey", s.is_active AS "isActive",
       s.failing_since AS "failingSince", c.host, m.next_attempt_at AS lease`;
const CLAIM = claimSql(false);
const CLAIM_SKIPPING_HOSTS = claimSql(true);

/**
 * Claims up to `max` due messages, oldest due first, at most `perHost - busy` per receiver host.
 * Messages of hosts that are full stay for other workers or later.
 */
export async function claimDue(limits: ClaimLimits): Promise<ClaimedMessage[]> {
  if (limits.max <= 0) return [];
  const hosts = [...limits.busy.keys()];
  const used = hosts.map((h) => limits.busy.get(h)!);
  const lease = new Date(Date.now() + limits.leaseMs);
  const args = [limits.max, hosts, used, [...limits.fullHosts], limits.perHost, lease, limits.projectIds ? [...limits.projectIds] : null];
  const skipping = limits.fullHosts.length > 0;
  const { rows } = await rawPool().query<ClaimedMessage>({ name: skipping ? "webhook-claim-skipping" : "webhook-claim", text: skipping ? CLAIM_SKIPPING_HOSTS : CLAIM, values: args });
  return rows;
}

/** The messages of inactive subscriptions fail without being sent (see worker.ts). */
export async function failUnsent(messages: readonly ClaimedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await rawPool().query(
    `UPDATE webhook_messages m SET status = 'FAIL', next_attempt_at = NULL
     FROM unnest($1::text[], $2::timestamptz[]) AS c(id, lease)
     WHERE m.id = c.id AND m.status = 'PENDING' AND m.next_attempt_at = c.lease`,
    [messages.map((m) => m.id), messages.map((m) => m.lease)],
  );
}

/** Claimed messages this worker will not send (it is stopping): due again now, for another worker. */
export async function releaseClaims(messages: readonly ClaimedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await rawPool().query(
    `UPDATE webhook_messages m SET next_attempt_at = now()
     FROM unnest($1::text[], $2::timestamptz[]) AS c(id, lease)
     WHERE m.id = c.id AND m.status = 'PENDING' AND m.next_attempt_at = c.lease`,
    [messages.map((m) => m.id), messages.map((m) => m.lease)],
  );
}

/** What one attempt gave, for its WebhookAttempt row. */
export interface AttemptRecord {
  startedAt: Date;
  durationMs: number;
  httpStatus: number | null;
  success: boolean;
  error: string | null;
  responseBody: string | null;
  requestHeaders: Record<string, string>;
}

/** What a failed attempt means for the message and its subscription. */
export type FailureOutcome =
  /** Try again at this time. */
  | { kind: "retry"; at: Date }
  /** The schedule is exhausted: the message fails. */
  | { kind: "fail" }
  /** The receiver said 410 Gone. */
  | { kind: "gone" };

/** Reason shown for a subscription the service turned off. */
export const GONE_REASON = (at: Date) => `The receiver answered 410 Gone on ${at.toISOString()}: deliveries stopped. Turn the webhook on again to resume.`;
export const FAILING_REASON = (since: Date, days: number) =>
  `Every delivery failed for ${days} days (since ${since.toISOString()}): deliveries stopped. Fix the receiver, then turn the webhook on again.`;

function attemptRow(m: ClaimedMessage, a: AttemptRecord) {
  return {
    id: newId("att"),
    messageId: m.id,
    subscriptionId: m.subscriptionId,
    projectId: m.projectId,
    attempt: m.attempts + 1,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    httpStatus: a.httpStatus,
    success: a.success,
    error: a.error,
    responseBody: a.responseBody,
    requestHeaders: a.requestHeaders,
  };
}

/**
 * Records successful attempts, many in one statement. Answers the ids of the messages this worker
 * still held, which are now SUCCESS (and are to be charged); a message whose lease had ended
 * meanwhile keeps its state (its attempt is recorded all the same).
 */
export async function recordSuccesses(done: readonly { m: ClaimedMessage; a: AttemptRecord }[]): Promise<Set<string>> {
  if (done.length === 0) return new Set();
  const n = done.length;
  const cols = { id: new Array<string>(n), message: new Array<string>(n), sub: new Array<string>(n), project: new Array<string>(n), attempt: new Array<number>(n), startedAt: new Array<Date>(n), duration: new Array<number>(n), status: new Array<number | null>(n), body: new Array<string | null>(n), headers: new Array<string>(n), lease: new Array<Date>(n) };
  const failing = new Set<string>();
  for (let i = 0; i < n; i++) {
    const { m, a } = done[i]!;
    cols.id[i] = newId("att");
    cols.message[i] = m.id;
    cols.sub[i] = m.subscriptionId;
    cols.project[i] = m.projectId;
    cols.attempt[i] = m.attempts + 1;
    cols.startedAt[i] = a.startedAt;
    cols.duration[i] = a.durationMs;
    cols.status[i] = a.httpStatus;
    cols.body[i] = a.responseBody;
    cols.headers[i] = JSON.stringify(a.requestHeaders);
    cols.lease[i] = m.lease;
    if (m.failingSince !== null) failing.add(m.subscriptionId);
  }
  const { rows: updated } = await rawPool().query<{ id: string }>({
    name: "webhook-record-successes",
    text: `WITH attempts AS (
      INSERT INTO webhook_attempts (id, message_id, subscription_id, project_id, attempt, started_at, duration_ms, http_status, success, response_body, request_headers)
      SELECT a.id, a.message_id, a.subscription_id, a.project_id, a.attempt, a.started_at, a.duration_ms, a.http_status, true, a.response_body, a.request_headers
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::int[], $8::int[], $9::text[], $10::jsonb[])
        AS a(id, message_id, subscription_id, project_id, attempt, started_at, duration_ms, http_status, response_body, request_headers)
    )
    UPDATE webhook_messages m SET status = 'SUCCESS', attempts = m.attempts + 1, next_attempt_at = NULL
    FROM unnest($2::text[], $11::timestamptz[]) AS c(id, lease)
    WHERE m.id = c.id AND m.status = 'PENDING' AND m.next_attempt_at = c.lease
    RETURNING m.id`,
    values: [cols.id, cols.message, cols.sub, cols.project, cols.attempt, cols.startedAt, cols.duration, cols.status, cols.body, cols.headers, cols.lease],
  });
  // A success ends the subscription's run of failures (its own statement: see the module comment).
  if (failing.size > 0) await rawPool().query("UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = ANY($1::text[]) AND failing_since IS NOT NULL", [[...failing]]);
  return new Set(updated.map((u) => u.id));
}

/**
 * Records a failed attempt and what follows: another attempt later, the message failed, or the
 * subscription turned off (410 Gone, or failing for `deactivateAfterMs` without a success) with
 * every pending message of it failed. Answers the subscription's deactivation reason when this
 * attempt turned it off.
 */
export async function recordFailure(m: ClaimedMessage, a: AttemptRecord, outcome: FailureOutcome, deactivateAfterMs: number, now = new Date()): Promise<string | null> {
  return db().$transaction(async (tx) => {
    await tx.webhookAttempt.create({ data: attemptRow(m, a), select: { id: true } });
    const [sub] = await tx.$queryRaw<{ failingSince: Date; isActive: boolean }[]>`
      UPDATE webhook_subscriptions SET failing_since = coalesce(failing_since, ${a.startedAt})
      WHERE id = ${m.subscriptionId}
      RETURNING failing_since AS "failingSince", is_active AS "isActive"`;
    if (!sub) return null; // deleted meanwhile, with its messages
    let reason: string | null = null;
    if (sub.isActive && outcome.kind === "gone") reason = GONE_REASON(now);
    else if (sub.isActive && now.getTime() - sub.failingSince.getTime() >= deactivateAfterMs) reason = FAILING_REASON(sub.failingSince, Math.round(deactivateAfterMs / 86_400_000));
    const held = { id: m.id, status: "PENDING" as const, nextAttemptAt: m.lease };
    if (reason !== null) {
      await tx.webhookSubscription.update({ where: { id: m.subscriptionId }, data: { isActive: false, deactivatedReason: reason, deactivatedAt: now } });
      await tx.webhookMessage.updateMany({ where: held, data: { attempts: { increment: 1 } } });
      await tx.webhookMessage.updateMany({ where: { subscriptionId: m.subscriptionId, status: "PENDING" }, data: { status: "FAIL", nextAttemptAt: null } });
      return reason;
    }
    const data =
      outcome.kind === "retry"
        ? { attempts: { increment: 1 }, nextAttemptAt: outcome.at }
        : { attempts: { increment: 1 }, status: "FAIL" as const, nextAttemptAt: null };
    await tx.webhookMessage.updateMany({ where: held, data });
    return null;
  });
}
