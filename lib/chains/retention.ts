/**
 * The retention worker: one per cluster (the leader of the lock `retention:all`), every
 * RETENTION_INTERVAL_MS it removes what is older than each network's window from its family's
 * index (IndexRetention, lib/chains/family.ts: the consensus and Aptos indexes, devnets' and
 * upstreams') and the webhook history older than HISTORY_RETENTION_DAYS. Rows go in batches of
 * about `batchRows`, each in a short transaction of its own fenced by the worker's term, with a
 * turn of the event loop between batches: no statement holds its locks for long, readers and the
 * index writers go on meanwhile, and a leader that lost its lock writes nothing more. A run that
 * stops half-way (a stop, a crash) leaves whole blocks only, and the next run goes on from there.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Env } from "@/lib/env";
import { componentLogger, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { HISTORY_RETENTION_DAYS, sweepWebhookHistory } from "@/lib/webhooks/service";
import type { LeaderTerm } from "@/lib/workers/leader-lock";
import { startWorker, type WorkerHandle } from "@/lib/workers/worker";
import type { IndexRetention } from "./family";

export const RETENTION_KIND = "retention";
/** Rows a batch aims at: the deletions of one transaction. */
export const BATCH_ROWS = 5000;
/** Rows a block is taken to hold until a batch tells: the first batch's size (100 blocks of 5,000 rows); the next ones are sized from the rows a block held. */
const FIRST_GUESS_ROWS_PER_BLOCK = 50;
const MAX_BATCH_BLOCKS = 100_000;

/** A network whose index a family keeps bounded. */
export interface RetentionTarget {
  network: Network;
  retention: IndexRetention;
}

/** What one pass removed: blocks and rows per network, and the webhook history. */
export interface RetentionReport {
  networks: Record<string, { below: bigint; blocks: number; rows: number; batches: number }>;
  webhooks: { attempts: number; messages: number };
}

export interface RetentionPass {
  targets: readonly RetentionTarget[];
  env: Env;
  term?: LeaderTerm;
  /** Ends the pass between two batches. */
  signal?: AbortSignal;
  batchRows?: number;
  /** The time the webhook history's age counts from (tests); default: now. */
  now?: number;
  log?: Logger;
}

/** Removes one network's blocks below its window, a batch at a time. */
async function pruneNetwork(t: RetentionTarget, p: RetentionPass): Promise<RetentionReport["networks"][string] | null> {
  const below = await t.retention.keepFrom(t.network, p.env);
  if (below === null) return null;
  const target = p.batchRows ?? BATCH_ROWS;
  const done = { below, blocks: 0, rows: 0, batches: 0 };
  let maxBlocks = Math.max(1, Math.floor(target / FIRST_GUESS_ROWS_PER_BLOCK));
  while (!p.signal?.aborted) {
    const batch = await t.retention.prune(t.network, below, { maxBlocks, term: p.term });
    if (batch.blocks === 0) break;
    done.blocks += batch.blocks;
    done.rows += batch.rows;
    done.batches += 1;
    maxBlocks = Math.max(1, Math.min(MAX_BATCH_BLOCKS, Math.floor((target * batch.blocks) / Math.max(1, batch.rows))));
    await nextTurn();
  }
  return done;
}

/** One pass over every target, then the webhook history: what the worker runs each interval (and tests and the bench run alone). */
export async function applyRetention(p: RetentionPass): Promise<RetentionReport> {
  const report: RetentionReport = { networks: {}, webhooks: { attempts: 0, messages: 0 } };
  for (const t of p.targets) {
    if (p.signal?.aborted) return report;
    const done = await pruneNetwork(t, p);
    if (!done) continue;
    report.networks[t.network.slug] = done;
    if (done.blocks > 0) p.log?.info({ network: t.network.slug, ...done, below: done.below.toString() }, `removed ${done.blocks} blocks (${done.rows} rows) of ${t.network.slug} below height ${done.below}`);
  }
  if (p.signal?.aborted) return report;
  report.webhooks = await sweepWebhookHistory(new Date((p.now ?? Date.now()) - HISTORY_RETENTION_DAYS * 86_400_000), { batch: p.batchRows, term: p.term });
  if (report.webhooks.attempts + report.webhooks.messages > 0) p.log?.info(report.webhooks, `deleted webhook history older than ${HISTORY_RETENTION_DAYS} days`);
  return report;
}

export interface RetentionOptions {
  databaseUrl: string;
  env: Env;
  targets: readonly RetentionTarget[];
  /** Default: the "retention" component logger. */
  logger?: Logger;
}

/** Runs applyRetention every RETENTION_INTERVAL_MS in the process holding the lock `retention:all`. */
export function startRetention(o: RetentionOptions): WorkerHandle {
  const log = o.logger ?? componentLogger("retention");
  return startWorker<null>({
    kind: RETENTION_KIND,
    key: "all",
    leader: { databaseUrl: o.databaseUrl },
    logger: log,
    init: async () => null,
    step: async (_state, { term, signal }) => {
      await applyRetention({ targets: o.targets, env: o.env, term, signal, log });
      return o.env.RETENTION_INTERVAL_MS;
    },
    classify: () => ({ what: "retention failed", level: "warn" }),
  });
}
