/**
 * The delivery state in the database: claiming due messages, and recording what each attempt gave.
 *
 * A claim takes due PENDING messages (nextAttemptAt ≤ now) with FOR UPDATE SKIP LOCKED, so any
 * number of workers in any number of processes share them without a leader, and leases them: their
 * nextAttemptAt moves to the end of the lease (a few attempts' timeouts plus a margin: see worker.ts). A worker that
 * dies mid-delivery leaves its messages to be claimed again when their lease ends; one that records
 * an attempt checks that it still holds the lease (nextAttemptAt unchanged since the claim answered
 * it) before changing the message, so a message is delivered twice only when an attempt was in
 * flight as its worker died. The lease's end is the database's now() plus its length, as the claim
 * compares it with now(): no worker's clock is involved, however far off it is.
 *
 * A lease also names its end (leasedUntil), its holder and its receiver, until the holder records
 * the attempt or hands the message back: what bounds the deliveries in flight to a receiver across
 * workers (claimSql; the rule is worker.ts's). A due retry's nextAttemptAt alone says nothing of
 * who holds it. Messages failed by another worker while one sends them (their subscription turned
 * off) keep that one's lease to its end: they may still be in flight. The holder of a worker that
 * runs in a cluster member names the member (leaseHolder): its leases count against their receiver
 * only while the member is live, so a dead worker blocks its receivers for MEMBER_LIVE_MS at most,
 * not for its leases' length (its messages themselves wait for their lease to end).
 *
 * The statements on the hot path (claim, release, success) go through node-postgres (rawPool())
 * rather than Prisma: one parsed and planned statement per batch, without the query compiler's
 * work per call.
 *
 * No statement here holds two row locks in an order another takes the other way round: a success
 * touches its message, then (separately) its subscription; a failure locks the subscription, then
 * its messages, as deleting a subscription does.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import { MEMBER_LIVE_MS } from "@/lib/cluster/members";
import { db, rawPool, rawTransaction } from "@/lib/db/client";
import { newId } from "@/lib/ids";
import type { QueueStats } from "@/lib/metrics";

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
  /** The receiver the concurrency bounds count by (receiverKeySql). */
  host: string;
  /** End of the lease: the message's nextAttemptAt while this worker holds it. */
  lease: Date;
  /** The W3C traceparent of the span that queued it (tracing on; lib/tracing.ts), for the attempt's span to link to. */
  traceParent: string | null;
}

/**
 * The receiver a URL's deliveries count against, as the claim computes it in SQL (the one
 * definition: the worker's per-host bounds and its connection pools use what the claim answers).
 * The URL's authority (host:port, without credentials), lower case; for a test inbox of this
 * service (`$inboxAuthority`, PUBLIC_URL's authority, then /v1/inbox/<token>), that and the inbox's
 * path: every project's inboxes are on one host, and they must not share one queue.
 */
const receiverKeySql = (url: string, inboxAuthority: string) => String.raw`(SELECT a.authority || CASE WHEN a.authority = ${inboxAuthority}
      THEN coalesce(substring(${url} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?[^/?#]*(/v1/inbox/[A-Za-z0-9_-]{32})(?:[?#]|$)'), '') ELSE '' END
    FROM (SELECT lower(substring(${url} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/?#]*)')) AS authority) a)`;

/** The authority of PUBLIC_URL as receiverKeySql compares it. */
export const inboxAuthority = (publicUrl: string) => new URL(publicUrl).host.toLowerCase();

export interface ClaimLimits {
  /** Messages to claim at most. */
  max: number;
  /** Deliveries a receiver may have in flight, all workers together (WEBHOOK_DELIVERY_PER_HOST). */
  perHost: number;
  /** Messages this worker may hold per receiver while no other worker holds any of its messages. */
  heldPerHost: number;
  /** Messages this worker holds now, by receiver: a claim adds to them. */
  busy: ReadonlyMap<string, number>;
  /** Receivers at heldPerHost: their messages are skipped. */
  fullHosts: readonly string[];
  leaseMs: number;
  /** The claiming worker (leaseHolder): its leases are in `busy`, those of any other live holder count against the receiver. */
  holder: string;
  /** The subscription served last: the walk starts after it (see claimSql); "" at first. */
  cursor: string;
  /** PUBLIC_URL's authority (inboxAuthority): deliveries to its test inboxes count per inbox. */
  inboxAuthority: string;
  /** Only these projects' messages (tests and benchmarks sharing a database); default all. */
  projectIds?: readonly string[];
}

/**
 * A new lease holder, unique in the cluster: for a worker of cluster member `memberId`,
 * `<memberId>/<worker>`, whose leases count while the member is live (webhook_receiver_leases reads
 * the member's row); for one outside any (tests, benchmarks), its host and pid, without a `/`:
 * its leases count until they end.
 */
export function leaseHolder(memberId: string | undefined): string {
  const worker = randomBytes(6).toString("hex");
  return memberId === undefined ? `${os.hostname()}:${process.pid}:${worker}` : `${memberId}/${worker}`;
}

/** Takes a receiver's turn to claim (an advisory lock until the transaction ends): see claimSql. */
export const receiverTurnSql = (receiver: string) => `pg_advisory_xact_lock(hashtext('webhook-receiver'), hashtext(${receiver}))`;

/** Messages a claim takes at most. */
export const CLAIM_MAX = 64;
/**
 * Subscriptions a claim serves at most (each offers an equal share of the claim): the walk stops
 * once it found this many with a due message. The next claim goes on from there.
 */
export const CLAIM_SUBSCRIPTIONS = 16;
/** Subscriptions with messages never attempted a claim looks at, at most (its walk; see claimSql). */
export const CLAIM_WALK = 1000;

// Two sources, both locked FOR UPDATE SKIP LOCKED (any number of workers share them):
// - Messages not attempted yet, round robin between subscriptions, so that one subscription's
//   backlog never holds another's fresh message: the claim walks the subscriptions that have such
//   messages in id order (a skip scan of their partial index on (subscription_id,
//   next_attempt_at): one index descent per subscription, landing on its earliest), starting after
//   the cursor and wrapping round to it, until it has found CLAIM_SUBSCRIPTIONS with one due (or
//   looked at CLAIM_WALK). Each offers its oldest due ones, an equal share of `max`. Only messages
//   never attempted are walked: those waiting for a retry (due in minutes or hours) would make the
//   walk visit every failing subscription at every claim.
// - Retries that are due, oldest first (their own partial index on next_attempt_at).
// A subscription counts when its receiver is not full and (for a claim of some projects only) its
// project is wanted. What was locked is ranked per receiver by round (each subscription's first,
// then each one's second, …; retries before new messages of the same round) and walk order, and
// those within each receiver's free slots are leased; the rest are unlocked when the statement
// ends. The answer carries each message's place in the walk and where the walk ended: the
// worker's next cursor. The receiver key is computed once per subscription walked and per retry.
//
// A receiver's free slots: with no live lease of another holder on it, heldPerHost ($5) less what
// this worker holds ($2/$3); otherwise perHost ($11) less what every holder holds. Claims of a
// receiver take their turns: each takes the receiver's advisory lock (in one order, by hash: no
// two claims wait for each other in a cycle) and only then counts the other holders' leases, with
// webhook_receiver_leases, a VOLATILE function whose query reads a snapshot taken as it runs (this
// statement's, taken before the lock, could miss the leases of a claim that committed meanwhile).
// Two claims therefore never both find room for the same slot. The lock is held until the claim
// commits: claims of other receivers never wait for it. A lease of a member's worker counts while
// the member's heartbeat is at most MEMBER_LIVE_MS ($12) old.
const claimSql = (filtered: boolean) => {
  // Each subscription's receiver and project; `wanted` of those, outside the unfiltered variant
  // (where $4 and $7 are empty and only referenced).
  const receiverOf = (sub: string) => `LEFT JOIN LATERAL (SELECT ${receiverKeySql("s.webhook_url", "$9")} AS host, s.project_id FROM webhook_subscriptions s WHERE s.id = ${sub}) t ON true`;
  const wanted = filtered
    ? "t.host IS NOT NULL AND ($7::text[] IS NULL OR t.project_id = ANY($7::text[])) AND t.host <> ALL($4::text[])"
    : "t.host IS NOT NULL AND $7::text[] IS NULL AND cardinality($4::text[]) = 0";
  const fresh = "m.status = 'PENDING' AND m.attempts = 0";
  const next = (after: string, wrapped: string) => `(SELECT m.subscription_id AS sub, m.next_attempt_at AS due, ${wrapped} AS wrapped FROM webhook_messages m
        WHERE ${fresh} AND m.subscription_id > ${after} AND (NOT ${wrapped} OR m.subscription_id <= $8)
        ORDER BY m.subscription_id, m.next_attempt_at LIMIT 1)
      UNION ALL
      (SELECT m.subscription_id, m.next_attempt_at, true FROM webhook_messages m
        WHERE NOT ${wrapped} AND ${fresh} AND m.subscription_id <= $8
        ORDER BY m.subscription_id, m.next_attempt_at LIMIT 1)
      LIMIT 1`;
  return `WITH RECURSIVE walk(sub, host, n, wrapped, ok, found) AS (
       SELECT f.sub, t.host, 1, f.wrapped, e.ok, e.ok::int
       FROM (${next("$8", "false")}) f ${receiverOf("f.sub")}, LATERAL (SELECT f.due <= now() AND ${wanted} AS ok) e
       UNION ALL
       SELECT x.sub, t.host, w.n + 1, x.wrapped, e.ok, w.found + e.ok::int
       FROM walk w CROSS JOIN LATERAL (${next("w.sub", "w.wrapped")}) x ${receiverOf("x.sub")}, LATERAL (SELECT x.due <= now() AND ${wanted} AS ok) e
       WHERE w.n < ${CLAIM_WALK} AND w.found < least($1, ${CLAIM_SUBSCRIPTIONS})
     ), offered AS (
       SELECT w.sub, w.host, w.n, ceil($1::numeric / count(*) OVER ())::int AS share FROM walk w WHERE w.ok
     ), news AS (
       SELECT l.id, l.next_attempt_at, o.sub, o.n, o.host FROM offered o CROSS JOIN LATERAL (
         SELECT m.id, m.next_attempt_at FROM webhook_messages m
         WHERE ${fresh} AND m.subscription_id = o.sub AND m.next_attempt_at <= now()
         ORDER BY m.next_attempt_at LIMIT o.share
         FOR UPDATE SKIP LOCKED) l
     ), retries AS (
       SELECT m.id, m.next_attempt_at, m.subscription_id AS sub, 0 AS n, t.host FROM webhook_messages m ${receiverOf("m.subscription_id")}
       WHERE m.status = 'PENDING' AND m.attempts > 0 AND m.next_attempt_at <= now() AND ${wanted}
       ORDER BY m.next_attempt_at LIMIT $1
       FOR UPDATE OF m SKIP LOCKED
     ), ranked AS (
       SELECT l.id, l.n, l.host, row_number() OVER (PARTITION BY l.sub ORDER BY l.next_attempt_at) AS round
       FROM (SELECT * FROM news UNION ALL SELECT * FROM retries) l
     ), locked AS (
       SELECT h.host, ${receiverTurnSql("h.host")}::text AS turn
       FROM (SELECT DISTINCT host FROM ranked) h ORDER BY hashtext(h.host)
     ), others AS (
       SELECT l.host, webhook_receiver_leases(l.host, $10, $12) AS leases FROM locked l
     ), chosen AS (
       SELECT r.id, r.host, r.n FROM (SELECT r.*, row_number() OVER (PARTITION BY r.host ORDER BY r.round, r.n) AS rn FROM ranked r) r
       JOIN others o ON o.host = r.host
       LEFT JOIN unnest($2::text[], $3::int[]) AS b(host, used) ON b.host = r.host
       WHERE r.rn <= CASE WHEN o.leases = 0 THEN $5 ELSE $11 - o.leases END - coalesce(b.used, 0)
       ORDER BY r.round, r.n LIMIT $1
     ), leased AS (
       UPDATE webhook_messages m SET next_attempt_at = now() + $6::int * interval '1 millisecond',
         leased_until = now() + $6::int * interval '1 millisecond', leased_by = $10, receiver = c.host
       FROM chosen c, webhook_subscriptions s
       WHERE m.id = c.id AND s.id = m.subscription_id
       RETURNING m.id, m.subscription_id AS "subscriptionId", m.project_id AS "projectId", s.network, m.attempts, m.test,
         m.payload::text AS body, s.webhook_url AS "webhookUrl", s.signing_key AS "signingKey", s.is_active AS "isActive",
         s.failing_since AS "failingSince", c.host, m.next_attempt_at AS lease, m.trace_parent AS "traceParent", nullif(c.n, 0) AS place
     )
     SELECT l.*, e.sub AS "walkedTo" FROM (SELECT sub FROM walk ORDER BY n DESC LIMIT 1) e RIGHT JOIN leased l ON true
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, (SELECT sub FROM walk ORDER BY n DESC LIMIT 1)
     WHERE NOT EXISTS (SELECT 1 FROM leased)`;
};
const CLAIM = claimSql(false);
const CLAIM_FILTERED = claimSql(true);

/**
 * Claims up to `max` due messages, round robin between subscriptions from `cursor` (claimSql), per
 * receiver at most `heldPerHost - busy` while no other worker holds any of its messages, and
 * `perHost` less what all hold otherwise. Messages of receivers that are full stay for other
 * workers or later. Answers them with the cursor for the next claim: the subscription served
 * last, or where the walk ended when none was.
 */
export async function claimDue(limits: ClaimLimits): Promise<{ messages: ClaimedMessage[]; cursor: string }> {
  if (limits.max <= 0) return { messages: [], cursor: limits.cursor };
  const hosts = [...limits.busy.keys()];
  const used = hosts.map((h) => limits.busy.get(h)!);
  const max = Math.min(limits.max, CLAIM_MAX);
  const args = [max, hosts, used, [...limits.fullHosts], limits.heldPerHost, limits.leaseMs, limits.projectIds ? [...limits.projectIds] : null, limits.cursor, limits.inboxAuthority, limits.holder, limits.perHost, MEMBER_LIVE_MS];
  const filtered = limits.fullHosts.length > 0 || limits.projectIds !== undefined;
  const { rows } = await rawPool().query<ClaimedMessage & { place: number | null; walkedTo: string | null }>({
    name: filtered ? "webhook-claim-filtered" : "webhook-claim",
    text: filtered ? CLAIM_FILTERED : CLAIM,
    values: args,
  });
  const messages: ClaimedMessage[] = [];
  let last: { place: number; sub: string } | undefined;
  for (const row of rows) {
    // The row that says where the walk ended when nothing was leased.
    if (row.id === null) continue;
    const { place, walkedTo: _walkedTo, ...m } = row;
    messages.push(m);
    if (place !== null && (!last || place > last.place)) last = { place, sub: m.subscriptionId };
  }
  return { messages, cursor: last?.sub ?? rows[0]?.walkedTo ?? limits.cursor };
}

/** What a holder writes as it lets a message go: its lease no longer counts against the receiver. */
const LEASE_ENDS = "leased_until = NULL, leased_by = NULL, receiver = NULL";
/** LEASE_ENDS for Prisma. */
const leaseEnds = { leasedUntil: null, leasedBy: null, receiver: null };

/** The messages of inactive subscriptions fail without being sent (see worker.ts). */
export async function failUnsent(messages: readonly ClaimedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await rawPool().query(
    `UPDATE webhook_messages m SET status = 'FAIL', next_attempt_at = NULL, ${LEASE_ENDS}
     FROM unnest($1::text[], $2::timestamptz[]) AS c(id, lease)
     WHERE m.id = c.id AND m.status = 'PENDING' AND m.next_attempt_at = c.lease`,
    [messages.map((m) => m.id), messages.map((m) => m.lease)],
  );
}

/** Claimed messages this worker will not send (it is stopping): due again now, for another worker. */
export async function releaseClaims(messages: readonly ClaimedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await rawPool().query(
    `UPDATE webhook_messages m SET next_attempt_at = now(), ${LEASE_ENDS}
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
 * Records successful attempts, many in one statement. Answers the ids of the messages to charge:
 * those this worker still held, which are now SUCCESS, unless prepaid (charged when queued). A
 * message whose lease had ended meanwhile keeps its state (its attempt is recorded all the same).
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
  const { rows: updated } = await rawPool().query<{ id: string; prepaid: boolean }>({
    name: "webhook-record-successes",
    text: `WITH attempts AS (
      INSERT INTO webhook_attempts (id, message_id, subscription_id, project_id, attempt, started_at, duration_ms, http_status, success, response_body, request_headers)
      SELECT a.id, a.message_id, a.subscription_id, a.project_id, a.attempt, a.started_at, a.duration_ms, a.http_status, true, a.response_body, a.request_headers
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::int[], $8::int[], $9::text[], $10::jsonb[])
        AS a(id, message_id, subscription_id, project_id, attempt, started_at, duration_ms, http_status, response_body, request_headers)
    )
    UPDATE webhook_messages m SET status = 'SUCCESS', attempts = m.attempts + 1, next_attempt_at = NULL, ${LEASE_ENDS}
    FROM unnest($2::text[], $11::timestamptz[]) AS c(id, lease)
    WHERE m.id = c.id AND m.status = 'PENDING' AND m.next_attempt_at = c.lease
    RETURNING m.id, m.prepaid`,
    values: [cols.id, cols.message, cols.sub, cols.project, cols.attempt, cols.startedAt, cols.duration, cols.status, cols.body, cols.headers, cols.lease],
  });
  // A success ends the subscription's run of failures (its own statement: see the module comment).
  // Locked in id order first: workers clearing the same subscriptions never wait for each other in a cycle.
  if (failing.size > 0) {
    await rawPool().query(
      `UPDATE webhook_subscriptions s SET failing_since = NULL
       FROM (SELECT id FROM webhook_subscriptions WHERE id = ANY($1::text[]) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE) l
       WHERE s.id = l.id`,
      [[...failing]],
    );
  }
  return new Set(updated.filter((u) => !u.prepaid).map((u) => u.id));
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
      await tx.webhookMessage.updateMany({ where: held, data: { attempts: { increment: 1 }, ...leaseEnds } });
      await tx.webhookMessage.updateMany({ where: { subscriptionId: m.subscriptionId, status: "PENDING" }, data: { status: "FAIL", nextAttemptAt: null } });
      return reason;
    }
    const data =
      outcome.kind === "retry"
        ? { attempts: { increment: 1 }, nextAttemptAt: outcome.at, ...leaseEnds }
        : { attempts: { increment: 1 }, status: "FAIL" as const, nextAttemptAt: null, ...leaseEnds };
    await tx.webhookMessage.updateMany({ where: held, data });
    return null;
  });
}

/** The due-queue query's bound: a scrape must not wait on a queue too large to count quickly. */
const DUE_QUEUE_TIMEOUT_MS = 1000;

// Due messages not claimed (a claim moves next_attempt_at to the end of its lease), never attempted
// and retries apart, each as the partial indexes of PENDING messages have them: the cost follows
// the pending messages, not the table's history.
const DUE_QUEUE = `WITH fresh AS (
    SELECT count(*) AS n, min(next_attempt_at) AS oldest FROM webhook_messages WHERE status = 'PENDING' AND attempts = 0 AND next_attempt_at <= now()
  ), retries AS (
    SELECT count(*) AS n, min(next_attempt_at) AS oldest FROM webhook_messages WHERE status = 'PENDING' AND attempts > 0 AND next_attempt_at <= now()
  )
  SELECT (fresh.n + retries.n)::int AS due, extract(epoch FROM now() - least(fresh.oldest, retries.oldest))::float8 AS oldest,
    (SELECT count(*) FROM webhook_subscriptions WHERE NOT is_active AND deactivated_at IS NOT NULL)::int AS disabled
  FROM fresh, retries`;

/** What the due-queue gauges show (lib/metrics): messages due and not claimed, how long the oldest has waited, subscriptions the service turned off. */
export async function dueQueue(): Promise<QueueStats> {
  const { due, oldest, disabled } = await rawTransaction(async (client) => {
    await client.query(`SET LOCAL statement_timeout = ${DUE_QUEUE_TIMEOUT_MS}`);
    const { rows } = await client.query<{ due: number; oldest: number | null; disabled: number }>({ name: "webhook-due-queue", text: DUE_QUEUE });
    return rows[0]!;
  });
  return { due, oldestDueSeconds: oldest === null ? null : Math.max(0, oldest), disabledSubscriptions: disabled };
}
