/**
 * What every family's devnet producer does, on lib/workers/worker.ts: for a network without an
 * upstream, produce a block every `blockTimeMs` into the family's index, resuming the chain after
 * a restart. One process produces per network: the leader of its index writer (others wait and
 * take over). It declines to produce on top of another chain (an upstream's, followed into the
 * index before).
 */
import type { Logger } from "@/lib/log";
import type { LeaderTerm } from "@/lib/workers/leader-lock";
import { startWorker, WORKER_DONE, type WorkerHandle } from "@/lib/workers/worker";

/** How a family's devnet resumes and grows. `S` is where it stands. */
export interface DevnetChain<S> {
  /** The index writer's lock (shared with the family's upstream follower). */
  kind: string;
  chainId: string | number;
  /** Where the devnet stopped (from the index), or "foreign" when the index holds another chain. */
  resume(): Promise<S | "foreign">;
  /** The height of the block `produce` makes next. */
  nextHeight(state: S): bigint | string;
  /** Makes the next block (at the time it is called) and stores it, moving `state`; the store checks `term` (lib/workers/leader-lock.ts). */
  produce(state: S, term: LeaderTerm | undefined): Promise<void>;
}

export interface DevnetProducerOptions {
  databaseUrl: string;
  blockTimeMs: number;
  /** The worker's logger (its own when omitted). */
  logger?: Logger;
}

/** Produces the devnet blocks of the network `key` as `chain` makes them; `log` takes the producer's lines. */
export function produceDevnetBlocks<S>(key: string, chain: DevnetChain<S>, opts: DevnetProducerOptions, log: Logger): WorkerHandle {
  return startWorker<S>({
    kind: chain.kind,
    key,
    leader: { databaseUrl: opts.databaseUrl },
    logger: opts.logger,
    async init() {
      const state = await chain.resume();
      if (state === "foreign") {
        log.warn("the index holds another chain (an upstream's); not producing devnet blocks on top of it");
        return WORKER_DONE;
      }
      log.info(`producing devnet blocks from height ${chain.nextHeight(state)} (chain id ${chain.chainId})`);
      return state;
    },
    async step(state, { term }) {
      const started = Date.now();
      await chain.produce(state, term);
      return Math.max(0, opts.blockTimeMs - (Date.now() - started));
    },
    classify: () => ({ what: "block production failed" }),
  });
}
