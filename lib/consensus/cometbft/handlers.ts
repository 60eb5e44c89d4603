/**
 * The methods of the native CometBFT interface, answered in CometBFT 0.38's JSON: blocks, txs and
 * results from the index (the same rows /rpc reads, converted by native.ts); the node's own state
 * from the upstream node, or, on a devnet, from the built-in chain (devnet/node.ts).
 */
import { internalError } from "@/lib/jsonrpc/errors";
import { RawJson } from "@/lib/jsonrpc/raw-json";
import type { Network } from "@/lib/networks";
import { COMETBFT_ENDPOINTS, type CometbftMethod } from "../catalog";
import { appHashAfter, devnetChain } from "../devnet/chain";
import { abciInfo, commitFor, consensusParams, emptyMempool, genesis, genesisChunk, netInfo, validatorSet } from "../devnet/node";
import { runMethod } from "../handlers";
import { blockSize, bytesJson, goTime, nativeIsOurs, nativeTx, type NativeBlock } from "../native";
import { genesisTime, getBlock, nativeBlock, nativeBlockResults, nativeBlocks, nativeExecResults, storedRange } from "../store";
import type { StatusResult, TxRecord } from "../types";
import { UpstreamUnavailableError, upstreamClient } from "../upstream/client";
import type { NativeParams } from "./params";

/** How many block metas /blockchain answers at most (CometBFT's limit). */
export const BLOCKCHAIN_LIMIT = 20;

const noBlocksYet = (network: Network) => internalError(`no blocks yet: ${network.slug} has not produced or ingested its first block`);

async function range(network: Network): Promise<{ earliest: bigint; latest: bigint }> {
  const r = await storedRange(network.slug);
  if (!r) throw noBlocksYet(network);
  return r;
}

/** A requested height checked against what is stored, with CometBFT's messages; the latest when omitted. */
async function resolveHeight(network: Network, height: bigint | undefined): Promise<bigint> {
  const { earliest, latest } = await range(network);
  if (height === undefined) return latest;
  if (height <= 0n) throw internalError(`height must be greater than 0, but got ${height}`);
  if (height > latest) throw internalError(`height ${height} must be less than or equal to the current blockchain height ${latest}`);
  if (height < earliest) throw internalError(`height ${height} is not available, lowest height is ${earliest}`);
  return height;
}

async function blockAt(network: Network, height: bigint): Promise<NativeBlock> {
  const found = await nativeBlock(network.slug, { height });
  if (!found) throw internalError(`block at height ${height} not found`);
  return JSON.parse(found.text) as NativeBlock;
}

/** Forwards a call to the network's node; its failure as callers see it, naming no URL. */
async function forward(network: Network, method: CometbftMethod, p: NativeParams): Promise<unknown> {
  try {
    return await upstreamClient(network).forward(method, p.forward, COMETBFT_ENDPOINTS[method].source !== "write");
  } catch (e) {
    if (e instanceof UpstreamUnavailableError) throw internalError(`the upstream node of ${network.slug} is not answering; try again shortly`);
    throw e;
  }
}

const chainOf = (network: Network) => devnetChain(network.slug, String(network.devnetChainId));

function pageStart(total: number, page: number, perPage: number, given: boolean): number {
  if (!given) return 0;
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (page < 1 || page > pages) throw internalError(`page should be within [1, ${pages}] range, given ${page}`);
  return (page - 1) * perPage;
}

/** CometBFT's filterMinMax: at most BLOCKCHAIN_LIMIT heights ending at maxHeight. */
function blockchainRange(earliest: bigint, latest: bigint, min: bigint | undefined, max: bigint | undefined): [bigint, bigint] {
  let lo = min === undefined || min === 0n ? 1n : min;
  let hi = max === undefined || max === 0n ? latest : max;
  if (hi > latest) hi = latest;
  if (lo < earliest) lo = earliest;
  if (lo < hi - BigInt(BLOCKCHAIN_LIMIT) + 1n) lo = hi - BigInt(BLOCKCHAIN_LIMIT) + 1n;
  if (lo > hi) throw internalError(`min height ${lo} can't be greater than max height ${hi}`);
  return [lo, hi];
}

/** The first height in a stored /rpc block body (its header's). */
const heightOfBody = (raw: RawJson): bigint => BigInt(/"height":"(\d+)"/.exec(raw.text)![1]!);

async function withExecs(network: Network, records: TxRecord[]) {
  const execs = await nativeExecResults(
    network.slug,
    records.map((r) => ({ height: BigInt(r.height), index: r.index })),
    nativeIsOurs(network),
  );
  return records.map((r) => nativeTx(r, execs.get(`${r.height}/${r.index}`) ?? null, r.proof));
}

async function devnetStatus(network: Network): Promise<StatusResult> {
  const s = (await runMethod("status", network, { page: 1, perPage: 1, prove: false })) as StatusResult;
  return { ...s, sync_info: { ...s.sync_info, latest_block_time: goTime(s.sync_info.latest_block_time), earliest_block_time: goTime(s.sync_info.earliest_block_time) } };
}

/** The node-state methods on a devnet: what a node running the built-in chain answers. */
async function devnetNode(network: Network, method: CometbftMethod, p: NativeParams): Promise<unknown> {
  const chain = chainOf(network);
  switch (method) {
    case "status":
      return devnetStatus(network);
    case "health":
      return {};
    case "net_info":
      return netInfo(chain);
    case "consensus_params":
      return consensusParams(await resolveHeight(network, p.parsed.height));
    case "validators": {
      const height = await resolveHeight(network, p.parsed.height);
      const all = validatorSet(chain, height);
      const start = pageStart(all.length, p.parsed.page, p.parsed.perPage, p.given.has("page"));
      const validators = all.slice(start, start + p.parsed.perPage);
      return { block_height: height.toString(), validators, count: String(validators.length), total: String(all.length) };
    }
    case "genesis":
    case "genesis_chunked": {
      const time = await genesisTime(network.slug);
      if (time === null) throw noBlocksYet(network);
      const doc = genesis(chain, time);
      if (method === "genesis") return { genesis: doc };
      const chunk = genesisChunk(doc, p.chunk ?? 0);
      if (typeof chunk === "string") throw internalError(chunk);
      return chunk;
    }
    case "abci_info": {
      const { latest } = await range(network);
      const block = await getBlock(network.slug, latest);
      return abciInfo(latest, bytesJson(appHashAfter(block!.block.header)));
    }
    case "num_unconfirmed_txs":
      return emptyMempool(null);
    case "unconfirmed_txs":
      return emptyMempool([]);
    default:
      throw internalError(`${method} is not available on ${network.slug}: it is a built-in devnet without a mempool or an application to query; configure ${network.upstreamVariable} to reach a real node`);
  }
}

async function commit(network: Network, p: NativeParams): Promise<unknown> {
  const height = await resolveHeight(network, p.parsed.height);
  const { latest } = await range(network);
  const block = await blockAt(network, height);
  if (height < latest) {
    const next = await blockAt(network, height + 1n);
    return { signed_header: { header: block.block.header, commit: next.block.last_commit }, canonical: true };
  }
  // The latest block's commit is not in any stored block yet: the node's seen commit.
  if (network.source.kind === "upstream") return forward(network, "commit", { ...p, forward: { height: height.toString() } });
  const commit = commitFor(chainOf(network), height, block.block_id, block.block.header.time);
  return { signed_header: { header: block.block.header, commit }, canonical: false };
}

async function blockchain(network: Network, p: NativeParams): Promise<unknown> {
  const { earliest, latest } = await range(network);
  const [lo, hi] = blockchainRange(earliest, latest, p.minHeight, p.maxHeight);
  const heights: bigint[] = [];
  for (let h = hi; h >= lo; h--) heights.push(h);
  const blocks = await nativeBlocks(network.slug, heights);
  const metas = [];
  for (const h of heights) {
    const raw = blocks.get(h);
    if (!raw) continue;
    const b = JSON.parse(raw.text) as NativeBlock;
    const size = blockSize(b);
    // A block with evidence: its size is the node's to tell.
    if (size === undefined && network.source.kind === "upstream") return forward(network, "blockchain", p);
    metas.push({ block_id: b.block_id, block_size: String(size ?? 0), header: b.block.header, num_txs: String(b.block.data.txs.length) });
  }
  return { last_height: latest.toString(), block_metas: metas };
}

/** Runs one native method. Throws RpcError for anything the caller got wrong. */
export async function runNative(method: CometbftMethod, network: Network, p: NativeParams): Promise<unknown> {
  const source = COMETBFT_ENDPOINTS[method].source;
  if (source !== "index") {
    if (network.source.kind !== "upstream") return devnetNode(network, method, p);
    // Our index is what status reports on (earliest block, catching up): the /rpc answer, in the node's shape.
    if (method === "status") return runMethod("status", network, p.parsed);
    return forward(network, method, p);
  }
  switch (method) {
    case "block":
      return new RawJson((await nativeBlock(network.slug, { height: await resolveHeight(network, p.parsed.height) }))?.text ?? "null");
    case "block_by_hash": {
      const found = await nativeBlock(network.slug, { hash: p.parsed.hash! });
      return found ? new RawJson(found.text) : { block_id: { hash: "", parts: { total: 0, hash: "" } }, block: null };
    }
    case "header":
      return { header: (await blockAt(network, await resolveHeight(network, p.parsed.height))).block.header };
    case "header_by_hash": {
      const found = await nativeBlock(network.slug, { hash: p.parsed.hash! });
      return { header: found ? (JSON.parse(found.text) as NativeBlock).block.header : null };
    }
    case "blockchain":
      return blockchain(network, p);
    case "commit":
      return commit(network, p);
    case "block_results": {
      const height = await resolveHeight(network, p.parsed.height);
      const text = await nativeBlockResults(network.slug, height, nativeIsOurs(network));
      if (text === null) throw internalError(`could not find results for height #${height}`);
      return new RawJson(text);
    }
    case "block_search": {
      const found = (await runMethod("block_search", network, p.parsed)) as { blocks: RawJson[]; total_count: number };
      const heights = found.blocks.map(heightOfBody);
      const blocks = await nativeBlocks(network.slug, heights);
      return { blocks: heights.map((h) => blocks.get(h)!), total_count: String(found.total_count) };
    }
    case "tx": {
      const record = (await runMethod("tx", network, p.parsed)) as TxRecord;
      return (await withExecs(network, [record]))[0];
    }
    case "tx_search": {
      const found = (await runMethod("tx_search", network, p.parsed)) as { txs: TxRecord[]; total_count: string };
      return { txs: await withExecs(network, found.txs), total_count: found.total_count };
    }
    default:
      throw internalError(`${method} is not served from the index`);
  }
}
