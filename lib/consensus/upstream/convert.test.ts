import { describe, expect, it, vi } from "vitest";
import { fromBase64, txHash, toBase64 } from "../crypto";
import { ADDR, blockId, HASH, realBlock, realResults, txs } from "./fixtures";
import { blockResultsSchema, cometBlockSchema } from "./comet";
import { ConversionError, toIngestBlock } from "./convert";
import { goTime } from "../native";
import { CometStandIn, toCometBlock, toCometBlockResults } from "./stand-in";

const convert = (block: unknown, results: unknown, warn?: (m: string) => void) => toIngestBlock(cometBlockSchema.parse(block), blockResultsSchema.parse(results), { warn });

describe("conversion of a real CometBFT block and its results", () => {
  it("gives the SPEC shapes: txs as data, signatures with type/height/round/index, tags from events", () => {
    const warn = vi.fn();
    const b = convert(realBlock(), realResults(), warn);
    expect(warn).not.toHaveBeenCalled();
    expect(b.height).toBe(101n);
    expect(b.result.block_id).toEqual({ hash: HASH("C"), parts: { total: 1, hash: HASH("D") } });
    const block = b.result.block;
    expect(Object.keys(block.header)).toEqual([
      "version", "chain_id", "height", "time", "last_block_id", "last_commit_hash", "data_hash", "validators_hash",
      "next_validators_hash", "consensus_hash", "app_hash", "last_results_hash", "evidence_hash", "proposer_address",
    ]);
    expect(block.header.version).toEqual({ block: "11", app: "0" });
    expect(block.data).toEqual(txs.map(toBase64));
    expect(block.evidence).toEqual([
      { type: "tendermint/DuplicateVoteEvidence", height: "99", time: "2025-03-04T05:05:59Z", total_voting_power: "400", validator: { pub_key: {}, voting_power: "100", address: ADDR("6") } },
    ]);
    expect(block.last_commit).toEqual({
      height: 100,
      round: 1,
      block_id: blockId,
      signatures: [
        { type: 2, height: "100", round: 1, block_id: blockId, timestamp: "2025-03-04T05:06:06.1Z", validator_address: ADDR("7"), validator_index: 0, signature: "c2lnLTA=" },
        // A vote for nil carries the zero block id; the absent validator is left out but keeps its index.
        { type: 2, height: "100", round: 1, block_id: { hash: "", parts: { total: 0, hash: "" } }, timestamp: "2025-03-04T05:06:06.2Z", validator_address: ADDR("8"), validator_index: 2, signature: "c2lnLTI=" },
      ],
    });
    expect(b.txs.map((t) => t.hash)).toEqual(txs.map(txHash));
    expect(b.txs[0]!.raw).toEqual(txs[0]);
    expect(b.txs[0]!.result).toEqual({
      log: "",
      gas_wanted: "200000",
      gas_used: "81234",
      tags: [
        { key: "tx.fee", value: "2000ubbn", index: true },
        { key: "tx.acc_seq", value: "bbn1abc/7", index: true },
        { key: "message.action", value: "/cosmos.bank.v1beta1.MsgSend", index: true },
        { key: "message.module", value: "bank", index: false },
      ],
    });
    expect(b.txs[1]!.result).toEqual({ log: "insufficient funds", gas_wanted: "100000", gas_used: "40000", tags: [] });
    // Only attributes marked for indexing are searchable, as in CometBFT's block indexer.
    expect(b.blockAttrs).toEqual([
      { key: "mint.amount", value: "1000ubbn" },
      { key: "mint.mode", value: "BeginBlock" },
    ]);
  });

  it("reads begin/end block events of older nodes and an empty block", () => {
    const results = {
      height: "101",
      txs_results: null,
      begin_block_events: [{ type: "mint", attributes: [{ key: "amount", value: "7", index: true }] }],
      end_block_events: [{ type: "epoch", attributes: [{ key: "number", value: "3", index: true }] }],
    };
    const warn = vi.fn();
    // CometBFT before v0.38 wrote an empty data_hash for a block without txs.
    const b = convert(realBlock({ txs: [], data_hash: "" }), results, warn);
    expect(warn).not.toHaveBeenCalled();
    expect(b.txs).toEqual([]);
    expect(b.result.block.data).toEqual([]);
    expect(b.blockAttrs).toEqual([
      { key: "mint.amount", value: "7" },
      { key: "epoch.number", value: "3" },
    ]);
  });

  it("warns when data_hash does not match the txs, and refuses results that do not belong to the block", () => {
    const warn = vi.fn();
    const b = convert(realBlock({ data_hash: HASH("0") }), realResults(), warn);
    expect(b.txs).toHaveLength(2);
    expect(warn).toHaveBeenCalledOnce();
    expect(warn.mock.calls[0]![0]).toMatch(/block 101: header data_hash 0+ does not match its 2 txs/);
    expect(() => convert(realBlock(), realResults({ height: "102" }))).toThrow(ConversionError);
    expect(() => convert(realBlock(), realResults({ txs_results: [] }))).toThrow(/2 txs but 0 tx results/);
    const bad = realBlock();
    bad.block.data.txs = ["not base64!"];
    expect(() => convert(bad, realResults({ txs_results: [{}] }))).toThrow(/not valid base64/);
  });

  it("is the inverse of the stand-in's real-shape rendering of devnet blocks", async () => {
    const node = await CometStandIn.start({ chainId: "bbn-1", blocks: 12 });
    try {
      for (let h = 1; h <= 12; h++) {
        const original = node.block(h);
        // Through JSON, as it travels.
        const block = JSON.parse(JSON.stringify(toCometBlock(original))) as unknown;
        const results = JSON.parse(JSON.stringify(toCometBlockResults(original))) as unknown;
        const warn = vi.fn();
        // The stored shapes, with the times as a node writes them (Go's RFC 3339, no trailing zeros).
        const { native: _, ...sent } = original;
        const b = sent.result.block;
        const expected = {
          ...sent,
          result: {
            ...sent.result,
            block: { ...b, header: { ...b.header, time: goTime(b.header.time) }, last_commit: { ...b.last_commit, signatures: b.last_commit.signatures.map((s) => ({ ...s, timestamp: goTime(s.timestamp) })) } },
          },
        };
        expect(convert(block, results, warn)).toEqual(expected);
        expect(warn).not.toHaveBeenCalled();
        expect(original.txs.map((t) => txHash(t.raw))).toEqual(original.result.block.data.map((d) => txHash(fromBase64(d))));
      }
    } finally {
      await node.stop();
    }
  });
});
