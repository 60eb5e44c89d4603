/**
 * What a CometBFT 0.38 node running the devnet chain answers for the state that is not in the index
 * (its validators, genesis, parameters, peers, application info, commits), in CometBFT's JSON.
 * Shared by the native interface on a devnet and by the tests' upstream stand-in.
 */
import { publicKeyJson } from "../crypto";
import { goTime, nativeCommitOf, type NativeCommit } from "../native";
import type { BlockId } from "../types";
import { makeCommit, VOTING_POWER, type DevnetChain } from "./chain";

export const P2P_PORT = 26656;
export const APP_NAME = "blockgate-devnet";
export const APP_VERSION_TEXT = "0.0.0";

export function nodeInfo(chain: DevnetChain, id: string, moniker: string) {
  return {
    protocol_version: { p2p: "8", block: "11", app: "0" },
    id,
    listen_addr: `tcp://0.0.0.0:${P2P_PORT}`,
    network: chain.chainId,
    version: "0.38.17",
    channels: "40202122233038606100",
    moniker,
    other: { tx_index: "on", rpc_address: "tcp://0.0.0.0:26657" },
  };
}

/** /consensus_params at a height (v0.38's parameters). */
export function consensusParams(height: bigint) {
  return {
    block_height: height.toString(),
    consensus_params: {
      block: { max_bytes: "22020096", max_gas: "-1" },
      evidence: { max_age_num_blocks: "100000", max_age_duration: "172800000000000", max_bytes: "1048576" },
      validator: { pub_key_types: ["ed25519"] },
      version: { app: "0" },
      abci: { vote_extensions_enable_height: "0" },
    },
  };
}

/** /net_info: the other validators as peers. */
export function netInfo(chain: DevnetChain) {
  const peers = chain.validators.slice(1).map((v) => ({
    node_info: nodeInfo(chain, v.nodeId, `validator-${v.index}`),
    is_outbound: v.index % 2 === 1,
    connection_status: { Duration: "60000000000", SendMonitor: {}, RecvMonitor: {}, Channels: [] },
    remote_ip: `10.0.0.${v.index}`,
  }));
  return { listening: true, listeners: [`Listener(@tcp://0.0.0.0:${P2P_PORT})`], n_peers: String(peers.length), peers };
}

/**
 * The validator set, in the order the commits number it. Priorities: the proposer of the height
 * leads, and they sum to zero, as CometBFT keeps them centred.
 */
export function validatorSet(chain: DevnetChain, height: bigint) {
  const n = chain.validators.length;
  const proposer = Number(height % BigInt(n));
  return chain.validators.map((v) => ({
    address: v.keys.address,
    pub_key: publicKeyJson(v.keys.publicKey),
    voting_power: String(VOTING_POWER),
    proposer_priority: String(v.index === proposer ? VOTING_POWER * (n - 1) : -VOTING_POWER),
  }));
}

/** The genesis document; `genesisTime` is the chain's first block time. */
export function genesis(chain: DevnetChain, genesisTime: string) {
  return {
    genesis_time: goTime(genesisTime),
    chain_id: chain.chainId,
    initial_height: "1",
    consensus_params: consensusParams(1n).consensus_params,
    validators: chain.validators.map((v) => ({ address: v.keys.address, pub_key: publicKeyJson(v.keys.publicKey), power: String(VOTING_POWER), name: `validator-${v.index}` })),
    app_hash: "",
    app_state: { accounts: chain.accounts.map((address) => ({ address, coins: [{ denom: "ubbn", amount: "1000000000000" }] })) },
  };
}

/** /genesis_chunked: CometBFT splits the genesis JSON in 16 MB chunks; the devnet's fits in one. */
export function genesisChunk(doc: unknown, chunk: number): { chunk: string; total: string; data: string } | string {
  if (chunk !== 0) return `there are 1 chunks, ${chunk} is invalid`;
  return { chunk: "0", total: "1", data: Buffer.from(JSON.stringify(doc)).toString("base64") };
}

/**
 * /abci_info after `height` with the app hash after it, written as block_results writes it ([]byte:
 * base64). ResponseInfo is written by its omitempty tags: no app hash when there is none.
 */
export function abciInfo(height: bigint, appHash: string | null) {
  return { response: { data: APP_NAME, version: APP_VERSION_TEXT, last_block_height: height.toString(), ...(appHash ? { last_block_app_hash: appHash } : {}) } };
}

/** The commit of a block as the validators signed it (deterministic: the one block H+1 carries). */
export function commitFor(chain: DevnetChain, height: bigint, blockId: BlockId, blockTime: string): NativeCommit {
  return nativeCommitOf(height, 0, blockId, makeCommit(chain, height, blockId, new Date(blockTime)));
}

export const emptyMempool = (txs: string[] | null) => ({ n_txs: "0", total: "0", total_bytes: "0", txs });
