import { followUpstream, RefusedError, type FollowedChain, type NodeHead, type UpstreamFollowerOptions } from "@/lib/chains/upstream-follower";
import { db } from "@/lib/db/client";
import { RpcError } from "@/lib/jsonrpc/errors";
import { componentLogger, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { WorkerHandle } from "@/lib/workers/worker";
import { deleteNetworkIndex, INDEX_WRITER_KIND, insertBlocks } from "../store";
import type { IngestBlock } from "../types";
import { UpstreamUnavailableError, upstreamClient, type CometClient } from "./client";
import { ConversionError, toIngestBlock } from "./convert";

export { DEFAULT_LOOKBACK, POLL_MS } from "@/lib/chains/upstream-follower";

/** Heights fetched (block + block_results each) and stored together. */
export const BATCH_SIZE = 8;

export interface FollowerOptions extends Omit<UpstreamFollowerOptions, "backoff"> {
  /** Overrides for tests (the logger receives the follower's lines and its worker's). */
  client?: CometClient;
}

export type FollowerHandle = WorkerHandle;

/** Where the follower stands: the next height to ingest, and the hash it must link to. */
interface Position {
  next: bigint;
  prevHash: string | undefined;
  /** The time of the block before `next` (seconds since the epoch), once this follower stored it. */
  time?: number;
}

async function storedHead(network: string): Promise<{ height: bigint; hash: string; chainId: string } | null> {
  const rows = await db().$queryRawUnsafe<Array<{ height: bigint; hash: string; chain_id: string }>>(
    "SELECT height, hash, body->'block'->'header'->>'chain_id' AS chain_id FROM consensus_blocks WHERE network = $1 ORDER BY height DESC LIMIT 1",
    network,
  );
  const row = rows[0];
  return row ? { height: row.height, hash: row.hash, chainId: row.chain_id } : null;
}

/** A CometBFT node's chain and index, as the upstream follower (lib/chains/upstream-follower.ts) reads and writes them. */
function cometChain(network: Network, client: CometClient, log: Logger): FollowedChain<NodeHead, Position> {
  const slug = network.slug;
  const chainId = String(network.chainId);

  const fetchBlock = async (height: bigint, signal: AbortSignal): Promise<IngestBlock> => {
    const { block, results, raw } = await client.blockWithResults(height, signal);
    if (block.block.header.height !== height.toString()) throw new ConversionError(`asked for block ${height}, got ${block.block.header.height}`);
    return toIngestBlock(block, results, { warn: (m) => log.warn(m), raw });
  };

  /** Refuses a batch that is not the continuation of what is stored. */
  const checkLinks = (blocks: IngestBlock[], prevHash: string | undefined) => {
    let prev = prevHash;
    for (const b of blocks) {
      const header = b.result.block.header;
      if (header.chain_id !== chainId) throw new RefusedError(`block ${b.height} is of chain ${header.chain_id}, not ${chainId}`);
      if (prev !== undefined && header.last_block_id.hash !== prev) {
        throw new RefusedError(`block ${b.height} does not follow the stored block ${b.height - 1n} (its last_block_id is ${header.last_block_id.hash}, ours ${prev})`);
      }
      prev = b.result.block_id.hash;
    }
  };

  return {
    kind: INDEX_WRITER_KIND,
    chainName: (id) => `chain ${id}`,
    labels: () => client.labels,
    async head(signal) {
      const status = await client.status(signal);
      return { chainId: status.node_info.network, oldest: BigInt(status.sync_info.earliest_block_height), latest: BigInt(status.sync_info.latest_block_height) };
    },
    async stored() {
      const head = await storedHead(slug);
      if (!head) return null;
      // Blocks the built-in devnet made before an upstream was configured are not this chain's.
      return { chainId: head.chainId, devnet: head.chainId === String(network.devnetChainId), resume: () => Promise.resolve({ next: head.height + 1n, prevHash: head.hash }) };
    },
    deleteIndex: (term) => deleteNetworkIndex(slug, term),
    startAt: (height) => Promise.resolve({ next: height < 1n ? 1n : height, prevHash: undefined }),
    caughtUp: (at, node) => at.next > node.latest,
    async ingest(at, node, { signal, term }) {
      const last = at.next + BigInt(BATCH_SIZE) - 1n < node.latest ? at.next + BigInt(BATCH_SIZE) - 1n : node.latest;
      const heights: bigint[] = [];
      for (let h = at.next; h <= last; h++) heights.push(h);
      const blocks = await Promise.all(heights.map((h) => fetchBlock(h, signal)));
      checkLinks(blocks, at.prevHash);
      await insertBlocks(slug, blocks, { term });
      at.next = last + 1n;
      at.prevHash = blocks.at(-1)?.result.block_id.hash;
      at.time = Date.parse(blocks.at(-1)!.result.block.header.time) / 1000;
    },
    from: (at) => `height ${at.next}`,
    nodeAt: (node) => String(node.latest),
    progress: (at, node) => `ingested up to height ${at.next - 1n} (node at ${node.latest})`,
    position: (at) => `continuing at height ${at.next}`,
    indexed: (at) => ({ height: at.next - 1n, time: at.time }),
    fromNode: (e) => e instanceof UpstreamUnavailableError || e instanceof RpcError || e instanceof ConversionError,
    reason: (e) => (e instanceof RpcError ? `${e.message}: ${e.data}` : undefined),
  };
}

/**
 * Follows a consensus network's upstream node into our index: block and block_results of every
 * height, in order, from where the index stops (or from `startHeight` when it is empty), then
 * each new block as the node commits it (lib/chains/upstream-follower.ts).
 */
export function startUpstreamFollower(network: Network, opts: FollowerOptions): FollowerHandle {
  const log = opts.logger ?? componentLogger("consensus", { network: network.slug });
  return followUpstream(network, cometChain(network, opts.client ?? upstreamClient(network), log), opts, log);
}
