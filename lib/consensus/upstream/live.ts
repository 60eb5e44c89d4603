/**
 * The answers of an upstream network that come from its node rather than from our index: status
 * and net_info (live, briefly cached so that callers cannot multiply the load on the node) and
 * consensus_params (immutable per height, cached).
 */
import { db } from "@/lib/db/client";
import { internalError as handlerError } from "@/lib/jsonrpc/errors";
import type { Network } from "@/lib/networks";
import type { ConsensusParamsResult, NetInfoResult, StatusResult } from "../types";
import { UpstreamUnavailableError, upstreamClient } from "./client";
import type { CometConsensusParams, CometNetInfo, CometStatus } from "./comet";

const STATUS_TTL_MS = 1000;
const NET_INFO_TTL_MS = 5000;
const PARAMS_CACHE_SIZE = 512;

/** One pending call per key; its result is reused for `ttlMs`. */
class Cache<T> {
  private readonly entries = new Map<string, { until: number; value: Promise<T> }>();
  constructor(private readonly max: number) {}

  get(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = load();
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { until: now + ttlMs, value });
    // A failure is not kept: the next caller asks the node again.
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}

const statuses = new Cache<CometStatus>(64);
const netInfos = new Cache<CometNetInfo>(64);
const params = new Cache<CometConsensusParams>(PARAMS_CACHE_SIZE);

/** The node's failure as our callers see it: never which URL failed, and no URL at all. */
async function fromNode<T>(network: Network, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof UpstreamUnavailableError) throw handlerError(`the upstream node of ${network.slug} is not answering; try again shortly`);
    throw e;
  }
}

const cacheKey = (network: Network, suffix = "") => `${network.slug} ${network.source.kind === "upstream" ? network.source.urls.join(" ") : ""} ${suffix}`;

interface StoredBound {
  height: bigint;
  hash: string;
  app_hash: string;
  time: string;
}

/** Earliest and latest stored block, reading only the header fields status shows (bodies can be large). */
async function indexBounds(network: string): Promise<{ earliest: StoredBound; latest: StoredBound } | null> {
  const pick = (order: "ASC" | "DESC") =>
    `(SELECT height, hash, body->'block'->'header'->>'app_hash' AS app_hash, body->'block'->'header'->>'time' AS time
      FROM consensus_blocks WHERE network = $1 ORDER BY height ${order} LIMIT 1)`;
  const rows = await db().$queryRawUnsafe<StoredBound[]>(`${pick("ASC")} UNION ALL ${pick("DESC")}`, network);
  const [earliest, latest] = rows;
  return earliest && latest ? { earliest, latest } : null;
}

/**
 * The node's status, with what our index can serve: earliest_* are our earliest stored block
 * (CometBFT's own "nothing yet" values while the index is empty), and catching_up is also true
 * while the index is more than one block behind the node.
 */
export async function upstreamStatus(network: Network): Promise<StatusResult> {
  const client = upstreamClient(network);
  const [node, bounds] = await Promise.all([fromNode(network, () => statuses.get(cacheKey(network), STATUS_TTL_MS, () => client.status())), indexBounds(network.slug)]);
  const { node_info: ni, sync_info: si } = node;
  const behind = bounds === null || BigInt(si.latest_block_height) - bounds.latest.height > 1n;
  const earliest = bounds?.earliest;
  return {
    node_info: {
      protocol_version: ni.protocol_version,
      id: ni.id,
      listen_addr: ni.listen_addr,
      network: ni.network,
      version: ni.version,
      channels: ni.channels,
      moniker: ni.moniker,
      // tx_search and tx are served from our own index, whatever the node's indexer does.
      other: { tx_index: "on", rpc_address: ni.other.rpc_address },
    },
    sync_info: {
      latest_block_hash: si.latest_block_hash,
      latest_app_hash: si.latest_app_hash,
      latest_block_height: si.latest_block_height,
      latest_block_time: si.latest_block_time,
      earliest_block_hash: earliest?.hash ?? "",
      earliest_app_hash: earliest?.app_hash ?? "",
      earliest_block_height: earliest?.height.toString() ?? "0",
      earliest_block_time: earliest?.time ?? "1970-01-01T00:00:00Z",
      catching_up: si.catching_up || behind,
    },
    validator_info: node.validator_info,
  };
}

/** `tcp://<id>@<ip>:<port>`, the port taken from the peer's listen address. */
function peerUrl(id: string, remoteIp: string, listenAddr: string): string {
  const port = /:(\d+)$/.exec(listenAddr)?.[1] ?? "26656";
  return `tcp://${id}@${remoteIp}:${port}`;
}

export async function upstreamNetInfo(network: Network): Promise<NetInfoResult> {
  const client = upstreamClient(network);
  const n = await fromNode(network, () => netInfos.get(cacheKey(network), NET_INFO_TTL_MS, () => client.netInfo()));
  return {
    listening: n.listening,
    listeners: n.listeners,
    n_peers: n.n_peers,
    peers: n.peers.map((p) => ("node_id" in p ? { node_id: p.node_id, url: p.url } : { node_id: p.node_info.id, url: peerUrl(p.node_info.id, p.remote_ip, p.node_info.listen_addr) })),
  };
}

/** The node's consensus parameters at a height our index holds, in the served shape (types.ts). */
export async function upstreamConsensusParams(network: Network, height: bigint): Promise<ConsensusParamsResult> {
  const client = upstreamClient(network);
  // Parameters at a past height never change: cache them for as long as they stay in the cache.
  const r = await fromNode(network, () => params.get(cacheKey(network, height.toString()), Number.POSITIVE_INFINITY, () => client.consensusParams(height)));
  const p = r.consensus_params;
  return {
    block_height: r.block_height,
    consensus_params: {
      // time_iota_ms left the parameters in CometBFT v0.35; 1000 was its value until then.
      block: { max_bytes: p.block.max_bytes, max_gas: p.block.max_gas, time_iota_ms: p.block.time_iota_ms ?? "1000" },
      evidence: { max_age: p.evidence.max_age_num_blocks ?? p.evidence.max_age ?? "0" },
      validator: { pub_key_types: p.validator.pub_key_types },
    },
  };
}
