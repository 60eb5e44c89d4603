/**
 * API key verification, in the manner of Unkey's KeyService
 * (https://github.com/unkeyed/unkey/blob/main/apps/api/src/pkg/keys/service.ts): one place owns the
 * verification cache (positive and negative answers), the database lookup (one at a time per key,
 * however many requests miss together), the constant-time comparison and invalidation, here and
 * in every other process sharing the database (PostgreSQL LISTEN/NOTIFY).
 */
import { timingSafeEqual } from "node:crypto";
import { db, type Prisma } from "@/lib/db/client";
import { listen, type ListenOptions, type Listening } from "@/lib/db/listen";
import { isDatabaseUnreachable } from "@/lib/db/outage";
import type { Plan } from "@/lib/db/generated/enums";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { KeyAllowlist } from "./allowlist";
import { hashKey, looksLikeKey } from "./secret";

/** Who a verified key acts for. */
export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  plan: Plan;
  /** Overage on: a paid plan's project is served (and metered) past its allowance. */
  overage: boolean;
  /** The account that owns the project: free projects of one account share one throughput limit. */
  ownerId: string;
  /** The key's origin and address allowlists; absent when it has none. */
  allow?: KeyAllowlist;
}

/** Why a key was refused: not shaped like a key at all, no such key (never issued, or reset), or revoked. */
export type KeyRefusal = "MALFORMED" | "NOT_FOUND" | "REVOKED";

export type Verification = KeyPrincipal | KeyRefusal;

/** Told the SHA-256 of a key whose cached answer was dropped; undefined: every answer was. */
export type ForgetListener = (hash: string | undefined) => void;

interface Entry<V> {
  secret: string;
  hash: string;
  value: V;
  expires: number;
}

/**
 * Answers by the presented secret (a hit needs no hashing) and by its SHA-256 (for invalidation),
 * each for a time, at most `max` of them. When full, the oldest entry goes first: all entries
 * live equally long, so that is the one closest to expiring.
 */
class AnswerCache<V> {
  private readonly bySecret = new Map<string, Entry<V>>();
  private readonly byHash = new Map<string, Entry<V>>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.bySecret.size;
  }

  get(secret: string, now: number): V | undefined {
    const entry = this.bySecret.get(secret);
    return entry !== undefined && entry.expires > now ? entry.value : undefined;
  }

  /** The last answer for the secret even when expired (kept until replaced, evicted or invalidated). */
  stale(secret: string): V | undefined {
    return this.bySecret.get(secret)?.value;
  }

  set(secret: string, hash: string, value: V, expires: number): void {
    const old = this.bySecret.get(secret);
    if (old) this.remove(old);
    if (this.bySecret.size >= this.max) {
      const oldest = this.bySecret.values().next();
      if (!oldest.done) this.remove(oldest.value);
    }
    const entry: Entry<V> = { secret, hash, value, expires };
    this.bySecret.set(secret, entry);
    this.byHash.set(hash, entry);
  }

  delete(hash: string): void {
    const entry = this.byHash.get(hash);
    if (entry) this.remove(entry);
  }

  clear(): void {
    this.bySecret.clear();
    this.byHash.clear();
  }

  private remove(entry: Entry<V>): void {
    if (this.bySecret.get(entry.secret) === entry) this.bySecret.delete(entry.secret);
    if (this.byHash.get(entry.hash) === entry) this.byHash.delete(entry.hash);
  }
}

/** PostgreSQL channel on which a process announces the SHA-256 of a key whose cached answer is wrong (reset, or newly created). */
const CHANNEL = "blockgate_key_invalidated";
/** Valid keys cached. */
const MAX_VALID = 50_000;
/**
 * Unknown keys cached: apart from the valid ones, so a flood of made-up keys can push out only
 * other made-up keys, never a real client's cached answer.
 */
const MAX_UNKNOWN = 20_000;
/** How long a key, once verified, still counts as known valid (see verify's `beforeLookup`). */
const KNOWN_VALID_MS = 24 * 60 * 60_000;
const MAX_KNOWN_VALID = 100_000;

export interface KeyVerifierOptions {
  /** How long an answer (valid or not) is reused; 0 asks the database every time. */
  cacheTtlMs: number;
  /** Unknown keys cached at most (default 20,000). */
  maxUnknown?: number;
  /** Where it logs (default: the "keys" component's logger). */
  logger?: Logger;
}

export class KeyVerifier {
  private readonly valid = new AnswerCache<KeyPrincipal>(MAX_VALID);
  private readonly unknown: AnswerCache<"NOT_FOUND" | "REVOKED">;
  /**
   * SHA-256 of keys found valid in the last KNOWN_VALID_MS, oldest first, with when. Not an
   * answer (the database is still asked once the cache entry expires): only a sign that asking
   * is worth it, which a made-up key cannot fake.
   */
  private readonly knownValid = new Map<string, number>();
  private readonly pending = new Map<string, Promise<Verification>>();
  /**
   * The key each principal this verifier answered was verified from, for what holds a principal
   * longer than a request (a WebSocket): set once per database lookup, never on a cache hit.
   */
  private readonly keys = new WeakMap<KeyPrincipal, { secret: string; hash: string }>();
  private readonly forgetListeners = new Set<ForgetListener>();
  /** Bumped by every invalidation: a lookup that was in flight meanwhile may have read the old row. */
  private generation = 0;
  private lookupCount = 0;
  private readonly log: Logger;

  constructor(private readonly options: KeyVerifierOptions) {
    this.unknown = new AnswerCache(options.maxUnknown ?? MAX_UNKNOWN);
    this.log = options.logger ?? componentLogger("keys");
  }

  /** Database lookups made so far (a test observes caching and single-flight with it). */
  get lookups(): number {
    return this.lookupCount;
  }

  /**
   * Verifies a presented secret: synchronously when the cache holds the answer, through one
   * database lookup per key otherwise. Throws (or rejects) only when the database fails, or when
   * `beforeLookup` throws: it is called before a lookup starts (not when a request joins one in
   * flight) for a key not found valid in the last 24 hours. The gateway's per-address limit on
   * unknown keys refuses there, so a client's real key is never held back by what others sent
   * from its address.
   */
  verify(secret: string, beforeLookup?: () => void): Verification | Promise<Verification> {
    const now = performance.now();
    const principal = this.valid.get(secret, now);
    if (principal !== undefined) return principal;
    // The caches hold only secrets that passed this check, so a hit needs no regex.
    if (!looksLikeKey(secret)) return "MALFORMED";
    const refusal = this.unknown.get(secret, now);
    if (refusal !== undefined) return refusal;
    const hash = hashKey(secret);
    return this.pending.get(hash) ?? this.lookup(secret, hash, beforeLookup !== undefined && !this.wasValid(hash, now) ? beforeLookup : undefined, this.valid.stale(secret));
  }

  private wasValid(hash: string, now: number): boolean {
    const at = this.knownValid.get(hash);
    return at !== undefined && now - at < KNOWN_VALID_MS;
  }

  /** `expired`: this secret's last valid answer, served while the database is unreachable (no key can be reset meanwhile). */
  private lookup(secret: string, hash: string, beforeLookup: (() => void) | undefined, expired: KeyPrincipal | undefined): Promise<Verification> {
    beforeLookup?.();
    const generation = this.generation;
    this.lookupCount++;
    const pending: Promise<Verification> = db()
      .apiKey.findUnique({
        where: { hash },
        select: { id: true, hash: true, projectId: true, revokedAt: true, allowedOrigins: true, allowedIps: true, project: { select: { plan: true, overage: true, ownerId: true } } },
      })
      .then((row): Verification => {
        // The index found the row by hash; compare again in constant time before trusting it.
        const value: Verification = !row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash)) ? "NOT_FOUND" : row.revokedAt ? "REVOKED" : principalOf(row);
        if (typeof value !== "string") this.keys.set(value, { secret, hash });
        if (generation === this.generation) this.store(secret, hash, value);
        return value;
      })
      .catch((e: unknown): Verification => {
        if (expired !== undefined && generation === this.generation && isDatabaseUnreachable(e)) return expired;
        throw e;
      })
      .finally(() => {
        if (this.pending.get(hash) === pending) this.pending.delete(hash);
      });
    this.pending.set(hash, pending);
    return pending;
  }

  private store(secret: string, hash: string, value: Verification): void {
    const now = performance.now();
    if (typeof value !== "string") {
      this.knownValid.delete(hash);
      this.knownValid.set(hash, now);
      if (this.knownValid.size > MAX_KNOWN_VALID) {
        const oldest = this.knownValid.keys().next();
        if (!oldest.done) this.knownValid.delete(oldest.value);
      }
    }
    if (this.options.cacheTtlMs <= 0) return;
    const expires = now + this.options.cacheTtlMs;
    if (typeof value === "string") this.unknown.set(secret, hash, value === "REVOKED" ? "REVOKED" : "NOT_FOUND", expires);
    else this.valid.set(secret, hash, value, expires);
  }

  /**
   * Forgets a key (by the SHA-256 of its secret) in this process: the next request with it asks
   * the database. For a reset key, and for a new one (which a client may have sent, and been
   * refused, before it existed).
   */
  forget(hash: string): void {
    this.generation++;
    this.valid.delete(hash);
    this.unknown.delete(hash);
    this.knownValid.delete(hash);
    this.pending.delete(hash);
    this.forgotten(hash);
  }

  /** Forgets every cached answer: after missing notifications, any of them may be stale. */
  private forgetAll(): void {
    this.generation++;
    this.valid.clear();
    this.unknown.clear();
    this.pending.clear();
    this.forgotten(undefined);
  }

  private forgotten(hash: string | undefined): void {
    for (const listener of this.forgetListeners) {
      try {
        listener(hash);
      } catch (e) {
        this.log.error({ err: errorMessage(e) }, "a key invalidation listener failed");
      }
    }
  }

  /**
   * Calls `listener` whenever a key's cached answer is dropped here, by `forget` (this process's
   * invalidation, or another's notification) or, with undefined, when every answer is (the
   * listener reconnected). For what keeps acting on a verified key after its request: a WebSocket
   * verifies its key again (`verifyAgain`). Returns the unsubscribe function.
   */
  onForget(listener: ForgetListener): () => void {
    this.forgetListeners.add(listener);
    return () => {
      this.forgetListeners.delete(listener);
    };
  }

  /** The SHA-256 of the key a principal from this verifier was verified from (what `forget` and `onForget` name). */
  keyHashOf(principal: KeyPrincipal): string | undefined {
    return this.keys.get(principal)?.hash;
  }

  /**
   * Verifies again the key a principal from this verifier was verified from: the normal path (the
   * cache, or once it was forgotten, one database lookup shared by every caller). MALFORMED for a
   * principal this verifier did not answer.
   */
  verifyAgain(principal: KeyPrincipal): Verification | Promise<Verification> {
    const key = this.keys.get(principal);
    return key === undefined ? "MALFORMED" : this.verify(key.secret);
  }

  /**
   * Makes a change to keys in one transaction: `change` answers its result and the SHA-256 of every
   * key whose cached answer it makes wrong. The notification goes out inside the transaction, so
   * every process listening on the database (this one included) hears of it when, and only if, the
   * change commits: none is lost between the commit and a send after it. This process forgets the
   * keys at once after the commit.
   */
  async change<T>(change: (tx: Prisma.TransactionClient) => Promise<{ result: T; hashes: readonly string[] }>): Promise<T> {
    const { result, hashes } = await db().$transaction(async (tx) => {
      const done = await change(tx);
      if (done.hashes.length > 0) await tx.$executeRaw`SELECT pg_notify(${CHANNEL}, h) FROM unnest(${[...done.hashes]}::text[]) AS h`;
      return done;
    });
    for (const hash of hashes) this.forget(hash);
    return result;
  }

  /**
   * Applies other processes' invalidations (ROLE=web on several machines) until stopped. A lost
   * connection (also one gone silent: see lib/db/listen.ts) is re-established every second; until
   * then the cache TTL bounds staleness, and on every (re)connection the whole cache is dropped,
   * since notifications sent meanwhile were missed.
   */
  listen(connectionString: string, options: Pick<ListenOptions, "heartbeatMs"> = {}): Listening {
    return listen({
      ...options,
      connectionString,
      channel: CHANNEL,
      name: "key invalidations",
      onNotification: (hash) => {
        if (hash) this.forget(hash);
      },
      // Whatever was cached while not listening may have missed an invalidation.
      onListening: (afterOutage) => {
        this.forgetAll();
        if (afterOutage) this.log.info("key invalidation listener reconnected");
      },
      onLost: (e) =>
        this.log.warn(
          { err: errorMessage(e) },
          "key invalidation listener cannot reach the database; retrying every second (meanwhile a key reset elsewhere takes up to KEY_CACHE_TTL_MS to apply here)",
        ),
    });
  }
}

function principalOf(row: {
  id: string;
  projectId: string;
  allowedOrigins: string[];
  allowedIps: string[];
  project: { plan: Plan; overage: boolean; ownerId: string };
}): KeyPrincipal {
  const principal: KeyPrincipal = { keyId: row.id, projectId: row.projectId, plan: row.project.plan, overage: row.project.overage, ownerId: row.project.ownerId };
  const allow = KeyAllowlist.compile(row.allowedOrigins, row.allowedIps);
  if (allow) principal.allow = allow;
  return principal;
}
