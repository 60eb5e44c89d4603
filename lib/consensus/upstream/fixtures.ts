/**
 * For tests only: /block and /block_results as a CometBFT v0.38 node with a Cosmos SDK 0.50 app
 * writes them (https://docs.cometbft.com/v0.38/rpc/): nanosecond times, evidence, an absent
 * validator (block_id_flag 1, signature null), a vote for nil, ABCI results with their default
 * fields (and one written otherwise, which must be served as sent all the same), and a field of a
 * future version.
 */
import { dataHash, toBase64, utf8 } from "../crypto";

export const HASH = (c: string) => c.repeat(64);
export const ADDR = (c: string) => c.repeat(40);
/** The block id of height 100. */
export const blockId = { hash: HASH("A"), parts: { total: 1, hash: HASH("B") } };
export const txs = [utf8('{"body":{"messages":[{"@type":"/cosmos.bank.v1beta1.MsgSend"}]}}'), utf8("second tx")];

/** The block id of a height: 100 and 101 have fixed ones, the others one derived from the height. */
export function blockIdAt(height: number) {
  if (height === 100) return blockId;
  if (height === 101) return { hash: HASH("C"), parts: { total: 1, hash: HASH("D") } };
  const hex = height.toString(16).toUpperCase();
  return { hash: hex.padStart(64, "0"), parts: { total: 1, hash: hex.padStart(64, "E") } };
}

/**
 * /block of a height (101 unless told), following the block of the height below: its
 * last_block_id and last_commit name that block.
 */
export function realBlock(overrides: { data_hash?: string; txs?: Uint8Array[]; height?: number } = {}) {
  const blockTxs = overrides.txs ?? txs;
  const height = overrides.height ?? 101;
  return {
    block_id: blockIdAt(height),
    block: {
      header: {
        version: { block: "11" },
        chain_id: "bbn-1",
        height: String(height),
        time: `2025-03-04T05:06:${String(height - 94).padStart(2, "0")}.123456789Z`,
        last_block_id: blockIdAt(height - 1),
        last_commit_hash: HASH("E"),
        data_hash: overrides.data_hash ?? dataHash(blockTxs),
        validators_hash: HASH("F"),
        next_validators_hash: HASH("F"),
        consensus_hash: HASH("1"),
        app_hash: HASH("2"),
        last_results_hash: HASH("3"),
        evidence_hash: HASH("4"),
        proposer_address: ADDR("5"),
        extra_field_of_a_future_version: "ignored",
      },
      data: { txs: blockTxs.map(toBase64) },
      evidence: {
        evidence: [
          {
            type: "tendermint/DuplicateVoteEvidence",
            value: {
              vote_a: { type: 2, height: "99", round: 0, block_id: blockId, timestamp: "2025-03-04T05:06:00Z", validator_address: ADDR("6"), validator_index: 1, signature: "c2ln" },
              vote_b: { type: 2, height: "99", round: 0, block_id: blockId, timestamp: "2025-03-04T05:06:00Z", validator_address: ADDR("6"), validator_index: 1, signature: "c2lnMg==" },
              TotalVotingPower: "400",
              ValidatorPower: "100",
              Timestamp: "2025-03-04T05:05:59Z",
            },
          },
        ],
      },
      last_commit: {
        height: String(height - 1),
        round: 1,
        block_id: blockIdAt(height - 1),
        signatures: [
          { block_id_flag: 2, validator_address: ADDR("7"), timestamp: "2025-03-04T05:06:06.1Z", signature: "c2lnLTA=" },
          { block_id_flag: 1, validator_address: "", timestamp: "0001-01-01T00:00:00Z", signature: null },
          { block_id_flag: 3, validator_address: ADDR("8"), timestamp: "2025-03-04T05:06:06.2Z", signature: "c2lnLTI=" },
        ],
      },
    },
  };
}

/** /block_results of height 101 (unless told) for the txs of realBlock(). */
export function realResults(overrides: { height?: string; txs_results?: unknown } = {}) {
  return {
    height: overrides.height ?? "101",
    txs_results: overrides.txs_results ?? [
      {
        // Every field, zero values too (jsonpb with EmitDefaults): code 0, an empty log, a false index.
        code: 0,
        data: "EiYKJC9jb3Ntb3MuYmFuay52MWJldGExLk1zZ1NlbmRSZXNwb25zZQ==",
        log: "",
        info: "",
        gas_wanted: "200000",
        gas_used: "81234",
        events: [
          { type: "tx", attributes: [{ key: "fee", value: "2000ubbn", index: true }, { key: "acc_seq", value: "bbn1abc/7", index: true }] },
          { type: "message", attributes: [{ key: "action", value: "/cosmos.bank.v1beta1.MsgSend", index: true }, { key: "module", value: "bank", index: false }] },
        ],
        codespace: "",
      },
      // Not as a 0.38 node writes it (zero values left out, events null, fields out of order).
      { code: 5, log: "insufficient funds", codespace: "sdk", gas_wanted: "100000", gas_used: "40000", events: null },
    ],
    finalize_block_events: [
      { type: "mint", attributes: [{ key: "amount", value: "1000ubbn", index: true }, { key: "mode", value: "BeginBlock", index: true }] },
      { type: "commission", attributes: [{ key: "validator", value: "bbnvaloper1x", index: false }] },
    ],
    validator_updates: null,
    consensus_param_updates: null,
    // []byte: base64 (the header's app_hash is HexBytes: hex).
    app_hash: Buffer.alloc(32, 0x99).toString("base64"),
  };
}
