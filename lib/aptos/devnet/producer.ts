import { produceDevnetBlocks, type DevnetProducerOptions } from "@/lib/chains/devnet-producer";
import { componentLogger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { WorkerHandle } from "@/lib/workers/worker";
import { aptosCursor, APTOS_INDEX_KIND, storeAptosBlocks, type AptosCursor } from "../store";
import type { IngestBlock } from "../types";
import { buildBlock, devnetStateSchema, genesisBlock, userTxCountFor, type DevnetChain, type DevnetState } from "./chain";

/** Where the devnet stands: the stored cursor, and the chain state it carries. */
interface Position {
  cursor: AptosCursor | null;
  state: DevnetState | null;
}

/**
 * Reads where the devnet stopped; "foreign" when the index holds another chain (an upstream was
 * followed into it, or the cursor is of another chain id).
 */
async function resume(network: Network): Promise<Position | "foreign"> {
  const cursor = await aptosCursor(network.slug).read();
  if (!cursor) return { cursor: null, state: null };
  if (cursor.source !== "devnet" || cursor.chainId !== Number(network.devnetChainId)) return "foreign";
  const state = devnetStateSchema.safeParse(cursor.devnet);
  if (!state.success) throw new Error(`the devnet state in the cursor of ${network.slug} is not valid: ${state.error.message}`);
  return { cursor, state: state.data };
}

/** Builds the block after `p` (the genesis block first) at `timestampUs`. */
function nextBlock(chain: DevnetChain, p: Position, timestampUs: bigint, userTxs: number): { block: IngestBlock; next: Position } {
  const built =
    p.cursor && p.state
      ? buildBlock(chain, BigInt(p.cursor.nextHeight), BigInt(p.cursor.nextVersion), p.state, timestampUs > BigInt(p.state.timestampUs) ? timestampUs : BigInt(p.state.timestampUs) + 1n, userTxs)
      : genesisBlock();
  const cursor: AptosCursor = {
    source: "devnet",
    chainId: chain.chainId,
    nextHeight: (built.block.height + 1n).toString(),
    nextVersion: (built.block.lastVersion + 1n).toString(),
    devnet: built.state,
  };
  return { block: built.block, next: { cursor, state: built.state } };
}

const nowUs = () => BigInt(Date.now()) * 1000n;

/**
 * Produces a block every `blockTimeMs` for an Aptos network that has no upstream
 * (lib/chains/devnet-producer.ts). A restart resumes from the stored cursor, balances and sequence
 * numbers included. Its oldest blocks go as a fullnode prunes its history: lib/chains/retention.ts.
 */
export function startAptosDevnetProducer(network: Network, opts: DevnetProducerOptions): WorkerHandle {
  const chain: DevnetChain = { chainId: Number(network.devnetChainId) };
  const log = opts.logger ?? componentLogger("aptos", { network: network.slug });
  return produceDevnetBlocks<Position>(
    network.slug,
    {
      kind: APTOS_INDEX_KIND,
      chainId: chain.chainId,
      resume: () => resume(network),
      nextHeight: (p) => p.cursor?.nextHeight ?? 0n,
      async produce(p, term) {
        const height = p.cursor ? BigInt(p.cursor.nextHeight) : 0n;
        const { block, next } = nextBlock(chain, p, nowUs(), userTxCountFor(height));
        await storeAptosBlocks(network.slug, [block], { next: next.cursor!, expected: p.cursor, term });
        p.cursor = next.cursor;
        p.state = next.state;
      },
    },
    opts,
    log,
  );
}

/**
 * Generates `blocks` blocks with `userTxs` user transactions each (a number, or one per height such
 * as the live devnet's userTxCountFor) after the stored head, in bulk (tests and benchmarks): block
 * times one second apart, ending now.
 */
export async function generateAptosBlocks(network: Network, blocks: number, userTxs: number | ((height: bigint) => number), opts: { batch?: number } = {}): Promise<void> {
  const chain: DevnetChain = { chainId: Number(network.devnetChainId) };
  const resumed = await resume(network);
  if (resumed === "foreign") throw new Error(`${network.slug}: the index holds another chain`);
  let p = resumed;
  const start = nowUs() - BigInt(blocks) * 1_000_000n;
  const batch = opts.batch ?? 50;
  for (let built = 0; built < blocks; ) {
    const expected = p.cursor;
    const batchBlocks: IngestBlock[] = [];
    for (let i = 0; i < Math.min(batch, blocks - built); i++) {
      const height = p.cursor ? BigInt(p.cursor.nextHeight) : 0n;
      const { block, next } = nextBlock(chain, p, start + BigInt(built + i) * 1_000_000n, typeof userTxs === "number" ? userTxs : userTxs(height));
      batchBlocks.push(block);
      p = next;
    }
    await storeAptosBlocks(network.slug, batchBlocks, { next: p.cursor!, expected });
    built += batchBlocks.length;
  }
}
