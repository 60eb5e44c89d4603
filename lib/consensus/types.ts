/**
 * JSON shapes of the consensus-chain results that /rpc serves, field by field; they follow
 * CometBFT's RPC results (https://docs.cometbft.com/v0.38/rpc/).
 */

import type { BlockHeader, BlockId, TxProof } from "./crypto";

export type { BlockId, PartSetHeader, TxProof } from "./crypto";
export type Header = BlockHeader;

export interface CommitSig {
  type: number;
  height: string;
  round: number;
  block_id: BlockId;
  timestamp: string;
  validator_address: string;
  validator_index: number;
  signature: string;
}

export interface Evidence {
  type: string | number;
  height: number | string;
  time: number | string;
  total_voting_power: number | string;
  validator: { pub_key: Record<string, unknown>; voting_power: number | string; address: string };
}

export interface Block {
  header: Header;
  /** Transactions, base64. */
  data: string[];
  evidence: Evidence[];
  last_commit: { height: number; round: number; block_id: BlockId; signatures: CommitSig[] };
}

export interface BlockResult {
  block_id: BlockId;
  block: Block;
}

export interface Tag {
  key: string;
  value: string;
  index: boolean;
}

export interface TxResult {
  log: string;
  gas_wanted: string;
  gas_used: string;
  tags: Tag[];
}

export interface TxRecord {
  hash: string;
  height: string;
  index: number;
  tx_result: TxResult;
  tx: string;
  proof?: TxProof;
}

export interface StatusResult {
  node_info: {
    protocol_version: { p2p: string; block: string; app: string };
    id: string;
    listen_addr: string;
    network: string;
    version: string;
    channels: string;
    moniker: string;
    other: { tx_index: "on" | "off"; rpc_address: string };
  };
  sync_info: {
    latest_block_hash: string;
    latest_app_hash: string;
    latest_block_height: string;
    latest_block_time: string;
    earliest_block_hash: string;
    earliest_app_hash: string;
    earliest_block_height: string;
    earliest_block_time: string;
    catching_up: boolean;
  };
  validator_info: { address: string; pub_key: { type: string; value: string }; voting_power: string };
}

export interface ConsensusParamsResult {
  block_height: string;
  consensus_params: {
    block: { max_bytes: string; max_gas: string; time_iota_ms: string };
    evidence: { max_age: string };
    validator: { pub_key_types: string[] };
  };
}

export interface NetInfoResult {
  listening: boolean;
  listeners: string[];
  n_peers: string;
  peers: Array<{ node_id: string; url: string }>;
}

/** A transaction as ingested: raw bytes, result, and the event attributes to index. */
export interface IngestTx {
  raw: Uint8Array;
  hash: string;
  result: TxResult;
}

/** Block-level event attributes (begin/end block), indexed for block_search. */
export interface IngestAttr {
  key: string;
  value: string;
}

/** What a block is stored with for the native interface (native.ts). */
export interface NativeParts {
  /** The /block result. */
  block: unknown;
  /** The /block_results result. */
  results: unknown;
  /** Each tx's ExecTxResult, in block order. */
  execs: unknown[];
}

export interface IngestBlock {
  height: bigint;
  result: BlockResult;
  txs: IngestTx[];
  blockAttrs: IngestAttr[];
  /** The block in CometBFT's own JSON (native.ts); derived from the fields above when absent. */
  native?: NativeParts;
}
