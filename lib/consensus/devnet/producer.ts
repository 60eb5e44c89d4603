import { produceDevnetBlocks, type DevnetProducerOptions } from "@/lib/chains/devnet-producer";
import { db } from "@/lib/db/client";
import { componentLogger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { WorkerHandle } from "@/lib/workers/worker";
import { INDEX_WRITER_KIND, insertBlocks } from "../store";
import type { BlockResult, TxResult } from "../types";
import { appHashAfter, buildBlock, devnetChain, lastResultsHash, type DevnetChain, type PreviousBlock } from "./chain";

/** Transactions per block of the live devnet: a few, varying, sometimes none. */
export function txCountFor(height: bigint): number {
  const r = Number((height * 2654435761n) % 97n);
  return r < 10 ? 0 : 1 + (r % 8);
}

/**
 * Rebuilds the producer's state from the newest stored block, so a restart resumes the chain;
 * "foreign" when the stored chain is not this devnet's (an upstream was followed into the index).
 */
async function resumeFrom(chain: DevnetChain): Promise<PreviousBlock | null | "foreign"> {
  const row = await db().consensusBlock.findFirst({ where: { network: chain.network }, orderBy: { height: "desc" }, select: { height: true, body: true } });
  if (!row) return null;
  const body = row.body as unknown as BlockResult;
  const header = body.block.header;
  if (header.chain_id !== chain.chainId) return "foreign";
  const txs = await db().consensusTx.findMany({ where: { network: chain.network, height: row.height }, orderBy: { txIndex: "asc" }, select: { result: true } });
  const results = txs.map((t) => t.result as unknown as TxResult);
  return {
    height: row.height,
    blockId: body.block_id,
    time: new Date(header.time),
    appHash: appHashAfter(header),
    resultsHash: lastResultsHash(results),
  };
}

export type ProducerOptions = DevnetProducerOptions;

export type ProducerHandle = WorkerHandle;

/**
 * Produces a block every `blockTimeMs` for a consensus network that has no upstream
 * (lib/chains/devnet-producer.ts).
 */
export function startDevnetProducer(network: Network, opts: ProducerOptions): ProducerHandle {
  const chain = devnetChain(network.slug, String(network.devnetChainId));
  const log = opts.logger ?? componentLogger("consensus", { network: network.slug });
  return produceDevnetBlocks<{ prev: PreviousBlock | null }>(
    network.slug,
    {
      kind: INDEX_WRITER_KIND,
      chainId: chain.chainId,
      resume: async () => {
        const head = await resumeFrom(chain);
        return head === "foreign" ? head : { prev: head };
      },
      nextHeight: ({ prev }) => (prev ? prev.height + 1n : 1n),
      async produce(state, term) {
        const { prev } = state;
        const time = new Date(Math.max(Date.now(), prev ? prev.time.getTime() + 1 : 0));
        const height = prev ? prev.height + 1n : 1n;
        const { block, next } = buildBlock(chain, prev, time, txCountFor(height));
        await insertBlocks(network.slug, [block], { term });
        state.prev = next;
      },
    },
    opts,
    log,
  );
}

/**
 * Generates `blocks` blocks with `txsPerBlock` transactions each (a number, or one per height such
 * as the live devnet's txCountFor), after the stored head, in bulk (for benchmarks and tests):
 * block times are spaced one second apart ending now.
 */
export async function generateBlocks(network: Network, blocks: number, txsPerBlock: number | ((height: bigint) => number), opts: { batch?: number; onProgress?: (done: number) => void } = {}): Promise<void> {
  const chain = devnetChain(network.slug, String(network.devnetChainId));
  const resumed = await resumeFrom(chain);
  if (resumed === "foreign") throw new Error(`${network.slug}: the index holds blocks of another chain`);
  let prev = resumed;
  const start = Date.now() - blocks * 1000;
  const batch = opts.batch ?? 200;
  // Builds the next batch (signatures and hashes: this process's CPU) while PostgreSQL stores the
  // previous two, each on its own connection (its CPU); the batches commit in order.
  const storing: Promise<void>[] = [];
  let previous: Promise<void> | undefined;
  for (let built = 0; built < blocks; ) {
    const n = Math.min(batch, blocks - built);
    const batchBlocks = [];
    for (let i = 0; i < n; i++) {
      const t = new Date(Math.max(start + (built + i) * 1000, prev ? prev.time.getTime() + 1 : 0));
      const height = prev ? prev.height + 1n : 1n;
      const { block, next } = buildBlock(chain, prev, t, typeof txsPerBlock === "number" ? txsPerBlock : txsPerBlock(height));
      batchBlocks.push(block);
      prev = next;
      // Let the batches being stored stream on between blocks.
      if (storing.length > 0 && i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    if (storing.length >= 2) await storing.shift();
    built += n;
    const storedUpTo = built;
    const stored = insertBlocks(network.slug, batchBlocks, { after: previous });
    // Awaited in turn below; a failure must not count as unhandled meanwhile.
    stored.catch(() => undefined);
    previous = stored;
    storing.push(stored.then(() => opts.onProgress?.(storedUpTo)));
  }
  await Promise.all(storing);
}
