/**
 * The loop every background worker runs: optional leadership per (kind, key) across processes,
 * an init hook that finds where to continue, then steps until stopped, with exponential backoff
 * on failures (one log line per failure streak, one when it recovers) and a clean stop.
 */
import { setImmediate as nextTurn, setTimeout as delay } from "node:timers/promises";
import { isDatabaseUnreachable } from "@/lib/db/outage";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { DEFAULT_LEADER_TIMING, LeaderLock, LeadershipLostError, type LeaderTerm, type LeaderTiming } from "./leader-lock";

/** Returned by init or a step: this worker has nothing more to do; it releases its lock and ends. */
export const WORKER_DONE: unique symbol = Symbol("worker done");
export type WorkerDone = typeof WORKER_DONE;

export const DEFAULT_BACKOFF_BASE_MS = 1000;
export const DEFAULT_BACKOFF_MAX_MS = 30_000;
/** How often a worker that is not the leader tries to take over: the most a takeover after a kill takes. */
export const DEFAULT_LEADER_POLL_MS = 2000;

export interface WorkerContext {
  /**
   * Aborted by stop(), and when the leader lock is lost: the work in flight should end soon,
   * without committing more. A step ended this way does not count as a failure.
   */
  signal: AbortSignal;
  /** The worker's logger (carries its kind and key). */
  log: Logger;
  /**
   * Under a leader lock, this tenure's term: the worker's writes pass it to checkTerm
   * (lib/workers/leader-lock.ts) in their transaction, so that none commits once another process
   * has taken over (this one stopped for a while, say). Undefined without a lock.
   */
  term?: LeaderTerm;
}

/** How a failed init or step is logged and retried. */
export interface Failure {
  /** Opens the streak's log line: "upstream failed", "not ingesting". */
  what: string;
  /** The error's text for that line; default: its message. */
  reason?: string;
  /**
   * Something outside failed (a remote node, a refusal of what it sent) and what init built is
   * still good: after the backoff, retry the step under the same lock. Otherwise (the database,
   * the lock, anything unexpected) the worker starts over: lock released, then taken again, init.
   */
  keepState?: boolean;
  level?: "warn" | "error";
}

export interface WorkerOptions<S> {
  /** What the worker does, e.g. "consensus-index". */
  kind: string;
  /** Which one of its kind, e.g. a network's slug. */
  key: string;
  /**
   * One instance per (kind, key) steps at a time, across processes: the one holding the advisory
   * lock `blockgate:<kind>:<key>` on a connection of its own. The others poll to take over (every
   * `pollMs`); how soon a silent holder loses it is `timing` (DEFAULT_LEADER_TIMING). Without it, any number of instances step at once (they must share work by other means, such
   * as claiming rows with FOR UPDATE SKIP LOCKED).
   */
  leader?: { databaseUrl: string; pollMs?: number; timing?: Partial<LeaderTiming> };
  /** Finds where to continue (a cursor, a stored head); run at start and after every (re)acquisition of the lock or failure that starts over. */
  init: (ctx: WorkerContext) => Promise<S | WorkerDone>;
  /** One unit of work; returns how long to wait before the next one, in milliseconds. May change `state`. */
  step: (state: S, ctx: WorkerContext) => Promise<number | WorkerDone>;
  /** Delay after the first failure of a streak, doubling up to `maxMs`; default 1 s to 30 s. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** Default: every failure is "step failed", logged as an error, and starts over. */
  classify?: (error: unknown) => Failure;
  /** Where the worker stands, for the line that reports recovery (e.g. "continuing at height 120"). */
  position?: (state: S) => string;
  /** The worker let go of what init built: it stopped, lost its lock, or starts over after a failure (what it reports of its state is no longer current). */
  leave?: (state: S) => void;
  /** Default: componentLogger("worker", { kind, key }). */
  logger?: Logger;
}

export interface WorkerHandle {
  /**
   * Cancels sleeps at once, aborts the context's signal, waits for the init or step in flight,
   * then releases the lock. Idempotent: every call returns the same promise.
   */
  stop(): Promise<void>;
}

/**
 * Waits `ms`, or less when `signal` is aborted; always lets pending I/O events run first, aborted
 * or not: a loop that sleeps on an aborted signal still yields (it would otherwise spin on
 * microtasks and freeze the process).
 */
async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) await nextTurn();
  else await delay(ms, undefined, { signal }).catch(() => undefined);
}

export function startWorker<S>(options: WorkerOptions<S>): WorkerHandle {
  const log = options.logger ?? componentLogger("worker", { kind: options.kind, key: options.key });
  const baseMs = options.backoff?.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const maxMs = options.backoff?.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  const pollMs = options.leader?.pollMs ?? DEFAULT_LEADER_POLL_MS;
  const classify = options.classify ?? ((): Failure => ({ what: "step failed" }));

  const stopping = new AbortController();
  // One per lock tenure (or per init, without a lock): aborted when the lock is lost.
  let tenure = new AbortController();
  let context: WorkerContext = { signal: AbortSignal.any([stopping.signal, tenure.signal]), log };
  const lock = options.leader
    ? new LeaderLock(options.leader.databaseUrl, options.kind, options.key, () => tenure.abort(), { ...DEFAULT_LEADER_TIMING, ...options.leader.timing }, log)
    : undefined;

  const run = async () => {
    let state: { value: S } | undefined;
    let failures = 0;
    let waiting = false;

    const leave = () => {
      if (state) options.leave?.(state.value);
      state = undefined;
    };

    const startOver = async () => {
      leave();
      tenure.abort();
      tenure = new AbortController();
      context = { signal: AbortSignal.any([stopping.signal, tenure.signal]), log };
      await lock?.release();
    };

    try {
      while (!stopping.signal.aborted) {
        if (lock?.lost) {
          log.warn(`lost the leader lock (${lock.lostReason}): stopped stepping until it is taken again`);
          await startOver();
        }
        try {
          if (lock && !lock.held) {
            if (!(await lock.tryAcquire())) {
              if (!waiting) log.info(`another worker holds the lock ${lock.name}; waiting to take over`);
              waiting = true;
              await sleep(pollMs, stopping.signal);
              continue;
            }
            if (waiting) log.info(`took over the lock ${lock.name}`);
            waiting = false;
            // A tenure of its own: the last one may have been aborted after startOver (the lock's
            // connection dropping while it was being taken), and would stop this one's steps at once.
            if (tenure.signal.aborted) tenure = new AbortController();
            context = { signal: AbortSignal.any([stopping.signal, tenure.signal]), log, term: lock.term };
          }
          if (!state) {
            const initial = await options.init(context);
            if (initial === WORKER_DONE) return;
            state = { value: initial };
          }
          const wait = await options.step(state.value, context);
          if (wait === WORKER_DONE) return;
          if (failures > 0) {
            const where = options.position ? `; ${options.position(state.value)}` : "";
            log.info(`recovered after ${failures} failed attempt${failures === 1 ? "" : "s"}${where}`);
            failures = 0;
          }
          await sleep(wait, context.signal);
        } catch (e) {
          // Ended by stop() or by the loss of the lock (handled above): not a failure.
          if (stopping.signal.aborted || lock?.lost) continue;
          if (e instanceof LeadershipLostError) {
            // Found out by a write before the lock's own check did (this process was stopped, say).
            log.warn(`lost the leader lock (${e.message}): stopped stepping until it is taken again`);
            await startOver();
            continue;
          }
          failures++;
          const failure = classify(e);
          const retryInMs = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
          if (failures === 1) {
            // The stack of an unexpected failure helps find its cause; a remote's failure, or an
            // unreachable database (an outage the service rides out), has none worth reading.
            const outage = isDatabaseUnreachable(e);
            log[failure.level ?? (outage ? "warn" : "error")](failure.keepState || outage ? {} : { err: e }, `${failure.what}, retrying with backoff (up to ${maxMs / 1000} s): ${failure.reason ?? errorMessage(e)}`);
          }
          log.debug({ failures, retryInMs }, `retrying in ${retryInMs} ms`);
          // A failure while taking the lock leaves nothing to keep.
          if (!failure.keepState || (lock && !lock.held)) await startOver();
          await sleep(retryInMs, stopping.signal);
        }
      }
    } finally {
      leave();
      await lock?.release();
    }
  };

  const running = run().catch((e: unknown) => log.error({ err: e }, `stopped on an unexpected error: ${errorMessage(e)}`));
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        await running;
      })();
      return stopped;
    },
  };
}
