import { publicDb } from "@/lib/db/client";
import { internalError as handlerError } from "@/lib/jsonrpc/errors";
import { RawJson } from "@/lib/jsonrpc/raw-json";
import type { Network } from "@/lib/networks";
import { storableExcerpt } from "@/lib/text";
import type { ConsensusMethod } from "./catalog";
import { txProof } from "./crypto";
import { CONSENSUS_PARAMS, devnetChain, validatorInfo } from "./devnet/chain";
import type { ParsedParams } from "./params";
import type { Query } from "./query/parse";
import { compileBlockQuery, compileTxCount, compileTxQuery } from "./query/sql";
import { blocksTxs, chainHead, getBlock, getTxByHash, toTxRecord, type ChainHead } from "./store";
import type { BlockResult, ConsensusParamsResult, NetInfoResult, StatusResult, TxRecord, TxResult } from "./types";
import { upstreamConsensusParams, upstreamNetInfo, upstreamStatus } from "./upstream/live";

async function requireHead(network: Network): Promise<ChainHead> {
  const head = await chainHead(network.slug);
  if (!head) throw handlerError(`no blocks yet: ${network.slug} has not produced or ingested its first block`);
  return head;
}

/** Checks a requested height against what is stored, with CometBFT's messages. */
async function resolveHeight(network: Network, height: bigint | undefined): Promise<bigint> {
  const head = await requireHead(network);
  if (height === undefined) return head.latest.height;
  if (height <= 0n) throw handlerError(`height must be greater than 0, but got ${height}`);
  if (height > head.latest.height) throw handlerError(`height ${height} must be less than or equal to the current blockchain height ${head.latest.height}`);
  if (height < head.earliest.height) throw handlerError(`height ${height} is not available, lowest height is ${head.earliest.height}`);
  return height;
}

function pageBounds(total: number, page: number, perPage: number): number {
  const pages = total === 0 ? 1 : Math.ceil(total / perPage);
  if (page < 1 || page > pages) throw handlerError(`page should be within [1, ${pages}] range, given ${page}`);
  return (page - 1) * perPage;
}

/**
 * The number of matches and the rows of the requested page. Page 1 always exists, so its rows are
 * read while the matches are counted (two connections); any other page is read once the count
 * says it exists, so a page far past the end costs no scan.
 */
async function countAndPage<T>(p: ParsedParams, count: () => Promise<number>, read: (offset: number) => Promise<T[]>): Promise<{ total: number; rows: T[] }> {
  if (p.page === 1) {
    const [total, rows] = await Promise.all([count(), read(0)]);
    return { total, rows };
  }
  const total = await count();
  return { total, rows: await read(pageBounds(total, p.page, p.perPage)) };
}

async function block(network: Network, p: ParsedParams): Promise<BlockResult> {
  const height = await resolveHeight(network, p.height);
  const result = await getBlock(network.slug, height);
  if (!result) throw handlerError(`block at height ${height} not found`);
  return result;
}

/** The records with their inclusion proofs, reading the transactions of all their blocks in one query. */
async function withProofs(network: Network, records: TxRecord[]): Promise<TxRecord[]> {
  const blocks = await blocksTxs(network.slug, records.map((r) => BigInt(r.height)));
  return records.map((r) => ({ ...r, proof: txProof(blocks.get(BigInt(r.height)) ?? [], r.index) }));
}

async function tx(network: Network, p: ParsedParams): Promise<TxRecord> {
  const found = await getTxByHash(network.slug, p.hash!);
  if (!found) throw handlerError(`tx (${p.hash}) not found`);
  const record = toTxRecord(found);
  return p.prove ? (await withProofs(network, [record]))[0]! : record;
}

/** The `n` of a one-row count statement; null when the statement says it cannot tell. */
async function countOf(sql: string, params: unknown[]): Promise<number | null> {
  const [row] = await publicDb().$queryRawUnsafe<{ n: bigint | null }[]>(sql, ...params);
  return row?.n === null || row?.n === undefined ? null : Number(row.n);
}

/** The statements of a search, given its compiled condition (`where`): shared with bench/query-plan.ts. */
export const SEARCH_SQL = {
  txCount: (where: string) => `SELECT count(*) AS n FROM consensus_txs t WHERE t.network = $1 AND ${where}`,
  txPage: (where: string, dir: "ASC" | "DESC", limit: number, offset: number) =>
    `SELECT t.height, t.tx_index, t.hash, t.raw, t.result FROM consensus_txs t WHERE t.network = $1 AND ${where}
     ORDER BY t.height ${dir}, t.tx_index ${dir} LIMIT ${limit} OFFSET ${offset}`,
  blockCount: (where: string) => `SELECT count(*) AS n FROM consensus_blocks b WHERE b.network = $1 AND ${where}`,
  // The stored text of each body (a BlockResult): written into the response as it is.
  blockPage: (where: string, dir: "ASC" | "DESC", limit: number, offset: number) =>
    `SELECT b.body::text AS body FROM consensus_blocks b WHERE b.network = $1 AND ${where} ORDER BY b.height ${dir} LIMIT ${limit} OFFSET ${offset}`,
};

/**
 * A query's text as the index holds it (insertBlocks): U+FFFD for NUL and unpaired surrogates,
 * which PostgreSQL text cannot hold, so an operand holding them finds what the chain wrote (and
 * the database, which refuses a NUL parameter, never sees one).
 */
function asIndexed(query: Query): Query {
  return {
    ...query,
    conditions: query.conditions.map((c) => (c.operand?.kind === "string" ? { ...c, operand: { ...c.operand, value: storableExcerpt(c.operand.value) } } : c)),
  };
}

/** The number of matches: from the ingestion's counters when they can tell, else by counting. */
async function txCount(network: Network, query: Query, where: string, params: unknown[]): Promise<number> {
  const countParams: unknown[] = [network.slug];
  const fromCounters = compileTxCount(query, countParams);
  const counted = fromCounters ? await countOf(fromCounters, countParams) : null;
  return counted ?? (await countOf(SEARCH_SQL.txCount(where), params)) ?? 0;
}

/** Counts matches and reads one page ordered by (height, index): paging happens in the database. */
async function txSearch(network: Network, p: ParsedParams): Promise<{ txs: TxRecord[]; total_count: string }> {
  const query = asIndexed(p.query!);
  const params: unknown[] = [network.slug];
  const where = compileTxQuery(query, params);
  const dir = p.order === "desc" ? "DESC" : "ASC";
  const { total, rows } = await countAndPage(
    p,
    () => txCount(network, query, where, params),
    (offset) =>
      publicDb().$queryRawUnsafe<Array<{ height: bigint; tx_index: number; hash: string; raw: Uint8Array; result: TxResult }>>(SEARCH_SQL.txPage(where, dir, p.perPage, offset), ...params),
  );
  const txs = rows.map((r) => toTxRecord({ height: r.height, index: r.tx_index, hash: r.hash, raw: r.raw, result: r.result }));
  if (!p.prove) return { txs, total_count: String(total) };
  return { txs: await withProofs(network, txs), total_count: String(total) };
}

async function blockSearch(network: Network, p: ParsedParams): Promise<{ blocks: RawJson[]; total_count: number }> {
  const params: unknown[] = [network.slug];
  const where = compileBlockQuery(asIndexed(p.query!), params);
  const dir = p.order === "asc" ? "ASC" : "DESC";
  const { total, rows } = await countAndPage(
    p,
    async () => (await countOf(SEARCH_SQL.blockCount(where), params)) ?? 0,
    (offset) => publicDb().$queryRawUnsafe<Array<{ body: string }>>(SEARCH_SQL.blockPage(where, dir, p.perPage, offset), ...params),
  );
  return { blocks: rows.map((r) => new RawJson(r.body)), total_count: total };
}

async function status(network: Network): Promise<StatusResult> {
  if (network.source.kind === "upstream") return upstreamStatus(network);
  const head = await requireHead(network);
  const chain = devnetChain(network.slug, String(network.devnetChainId));
  const latest = head.latest.body.block.header;
  const earliest = head.earliest.body.block.header;
  return {
    node_info: {
      protocol_version: { p2p: "8", block: latest.version.block, app: latest.version.app },
      id: chain.validators[0]!.nodeId,
      listen_addr: "tcp://0.0.0.0:26656",
      network: latest.chain_id,
      version: "0.38.17",
      channels: "40202122233038606100",
      moniker: `blockgate-devnet-${network.network}`,
      other: { tx_index: "on", rpc_address: "tcp://127.0.0.1:26657" },
    },
    sync_info: {
      latest_block_hash: head.latest.hash,
      latest_app_hash: latest.app_hash,
      latest_block_height: head.latest.height.toString(),
      latest_block_time: latest.time,
      earliest_block_hash: head.earliest.hash,
      earliest_app_hash: earliest.app_hash,
      earliest_block_height: head.earliest.height.toString(),
      earliest_block_time: earliest.time,
      // The built-in producer writes every block it makes: the index is always at the head.
      catching_up: false,
    },
    validator_info: validatorInfo(chain),
  };
}

async function consensusParams(network: Network, p: ParsedParams): Promise<ConsensusParamsResult> {
  const height = await resolveHeight(network, p.height);
  if (network.source.kind === "upstream") return upstreamConsensusParams(network, height);
  return { block_height: height.toString(), consensus_params: structuredClone(CONSENSUS_PARAMS) };
}

async function netInfo(network: Network): Promise<NetInfoResult> {
  if (network.source.kind === "upstream") return upstreamNetInfo(network);
  const chain = devnetChain(network.slug, String(network.devnetChainId));
  const peers = chain.validators.slice(1).map((v) => ({ node_id: v.nodeId, url: `tcp://${v.nodeId}@127.0.0.1:${26656 + v.index * 10}` }));
  return { listening: true, listeners: ["Listener(@tcp://0.0.0.0:26656)"], n_peers: String(peers.length), peers };
}

/** Runs one consensus method against the index. Throws RpcError for anything the caller got wrong. */
export function runMethod(method: ConsensusMethod, network: Network, p: ParsedParams): Promise<unknown> {
  switch (method) {
    case "block":
      return block(network, p);
    case "block_search":
      return blockSearch(network, p);
    case "status":
      return status(network);
    case "tx_search":
      return txSearch(network, p);
    case "tx":
      return tx(network, p);
    case "consensus_params":
      return consensusParams(network, p);
    case "net_info":
      return netInfo(network);
  }
}
