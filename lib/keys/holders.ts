/**
 * Keys held past their request: a long-lived connection (the CometBFT WebSocket, any streaming
 * interface) is admitted with a verified key and must not outlive the key's revocation, reset or a
 * change of its allowlists. Each holder is verified again whenever the key verifier drops the
 * key's cached answer (here or, through its notifications, in another process): one verification,
 * one database lookup, for all of a key's holders. Still valid and allowed, they go on with the
 * new principal (plan, overage, allowlists); refused, they are told why and end.
 *
 * When the database cannot answer, the holders go on as they were (as an expired cached answer is
 * served during an outage) and the key is asked about again later, backing off.
 */
import { AppError } from "@/lib/errors";
import { errorMessage, type Logger } from "@/lib/log";
import { services } from "@/lib/services";
import type { KeyPrincipal, KeyVerifier, Verification } from "./verifier";

/** What holds a verified key past its request. */
export interface KeyHolder {
  /** The principal it acts for now. */
  readonly principal: KeyPrincipal;
  /** The request that admitted it: its Origin header, and the client's address, for the allowlists (as the gateway read them). */
  readonly origin: string | string[] | undefined;
  address(): string;
  /** The key still admits it: it acts for `principal` from now on. */
  renewed(principal: KeyPrincipal): void;
  /** The key no longer admits it: `reason` for the client, `detail` (the refusal) for the log. */
  refused(reason: string, detail: string): void;
}

/** Waits before a re-verification the database could not answer is tried again: the first, doubling up to the most. Read at each retry. */
export interface RecheckBackoff {
  recheckRetryMs: number;
  recheckRetryMaxMs: number;
}

/** A re-verification in flight; the holders' work waits for `done`. */
interface Recheck {
  /** The key was forgotten again meanwhile: the answer may predate the change; ask again. */
  again: boolean;
  done: Promise<void>;
}

/** The answer of verifying a holder's key again, for that holder. */
function verdict(holder: KeyHolder, v: Verification): void {
  if (typeof v === "string") {
    holder.refused(v === "REVOKED" ? "API key revoked" : "API key reset or no longer valid", v);
    return;
  }
  if (v.allow) {
    // As at the admission: the origins are checked first, the address asked for only once the origin passed.
    let askedAddress = false;
    const refusal = v.allow.refusal(holder.origin, () => {
      askedAddress = true;
      return holder.address();
    });
    if (refusal !== undefined) {
      holder.refused(askedAddress ? "address no longer allowed by this key's allowlist" : "origin no longer allowed by this key's allowlist", refusal);
      return;
    }
  }
  holder.renewed(v);
}

/** The holders of keys for one interface, followed through the process's key verifier. */
export class KeyHolders {
  /** Holders by the SHA-256 of their key (what the verifier's invalidations name). */
  private readonly byHash = new Map<string, Set<KeyHolder>>();
  private readonly rechecks = new Map<string, Recheck>();
  /** Re-verifications the database could not answer, tried again later: failures so far and the timer. */
  private readonly retries = new Map<string, { failures: number; timer: NodeJS.Timeout }>();
  /** The verifier whose invalidations are followed, while any key is held. */
  private following: { verifier: KeyVerifier; stop: () => void } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly backoff: RecheckBackoff,
    private readonly verifier: () => KeyVerifier = () => services().keyVerifier,
  ) {}

  /**
   * The key a holder of `principal` is followed by (its SHA-256), checked before the holder is
   * taken on: a principal that did not come from the verifier could never be refused later (500).
   */
  admit(principal: KeyPrincipal): string {
    const hash = this.verifier().keyHashOf(principal);
    if (hash === undefined) throw new AppError("INTERNAL_SERVER_ERROR", "The server failed to process the request. Please try again.");
    return hash;
  }

  /**
   * Follows a holder's key (`hash`, from admit) until the returned function releases it. The key
   * was verified before the holder was taken on, perhaps a while before: when the verifier has
   * dropped that answer since, the holder missed the invalidation, and is verified again now.
   */
  hold(holder: KeyHolder, hash: string): () => void {
    const verifier = this.verifier();
    if (this.following?.verifier !== verifier) {
      this.following?.stop();
      this.following = { verifier, stop: verifier.onForget((h) => this.forgotten(h)) };
    }
    let set = this.byHash.get(hash);
    if (!set) this.byHash.set(hash, (set = new Set()));
    set.add(holder);
    const current = verifier.verifyAgain(holder.principal);
    if (current !== holder.principal) this.recheck(hash, current);
    return () => this.release(holder, hash);
  }

  /** A re-verification of the key under way, which the holders' next steps wait for; undefined when none is. */
  pending(hash: string): Promise<void> | undefined {
    return this.rechecks.get(hash)?.done;
  }

  private release(holder: KeyHolder, hash: string): void {
    const set = this.byHash.get(hash);
    if (!set?.delete(holder)) return;
    if (set.size === 0) {
      this.byHash.delete(hash);
      this.dropRetry(hash);
    }
    if (this.byHash.size === 0) {
      this.following?.stop();
      this.following = undefined;
    }
  }

  private forgotten(hash: string | undefined): void {
    if (hash === undefined) for (const h of [...this.byHash.keys()]) this.recheck(h);
    else if (this.byHash.has(hash)) this.recheck(hash);
  }

  /**
   * Verifies a key again for all its holders (one verification, one database lookup), then renews
   * or refuses each. `started`: a verification already under way for it.
   */
  private recheck(hash: string, started?: Verification | Promise<Verification>): void {
    // Not used below when a check is running: its failure is that check's to handle (once asked again).
    if (started instanceof Promise) started.catch(() => undefined);
    const running = this.rechecks.get(hash);
    if (running) {
      running.again = true;
      return;
    }
    const retry = this.retries.get(hash);
    if (retry) clearTimeout(retry.timer);
    const first = this.byHash.get(hash)?.values().next();
    if (!this.following || !first || first.done) {
      this.dropRetry(hash);
      return;
    }
    let settle!: () => void;
    const state: Recheck = { again: false, done: new Promise<void>((resolve) => (settle = resolve)) };
    this.rechecks.set(hash, state);
    // Settled first, so that an answer found stale is asked again as a new re-verification.
    const settled = (): boolean => {
      this.rechecks.delete(hash);
      settle();
      if (state.again) this.recheck(hash);
      return !state.again;
    };
    const apply = (v: Verification) => {
      if (!settled()) return;
      this.retries.delete(hash);
      for (const holder of [...(this.byHash.get(hash) ?? [])]) verdict(holder, v);
    };
    const failed = (e: unknown) => {
      if (!settled()) return;
      const failures = (this.retries.get(hash)?.failures ?? 0) + 1;
      const wait = Math.min(this.backoff.recheckRetryMs * 2 ** (failures - 1), this.backoff.recheckRetryMaxMs);
      this.log.warn({ err: errorMessage(e), connections: this.byHash.get(hash)?.size ?? 0, retryInMs: wait }, "cannot verify an API key of open connections again; they stay open meanwhile");
      this.retries.set(hash, { failures, timer: setTimeout(() => this.recheck(hash), wait).unref() });
    };
    try {
      const verified = started ?? this.following.verifier.verifyAgain(first.value.principal);
      if (verified instanceof Promise) verified.then(apply, failed);
      else apply(verified);
    } catch (e) {
      failed(e);
    }
  }

  /** Forgets a key's pending retry of its re-verification. */
  private dropRetry(hash: string): void {
    const retry = this.retries.get(hash);
    if (retry) clearTimeout(retry.timer);
    this.retries.delete(hash);
  }
}
