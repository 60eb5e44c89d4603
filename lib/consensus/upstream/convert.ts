/**
 * Real CometBFT `/block` + `/block_results` → the block, transactions and attributes we store.
 * The stored shapes are the ones /rpc serves (types.ts): txs as `data: string[]`, evidence as a list,
 * commit signatures with type/height/round/block_id/validator_index, tx results with tags.
 */
import { z } from "zod";
import { dataHash, fromBase64, txHash, zeroBlockId } from "../crypto";
import type { CommitSig, Evidence, Header, IngestAttr, IngestBlock, Tag } from "../types";
import type { CometBlock, CometBlockResults, CometEvent } from "./comet";

/** BlockIDFlag of a commit signature. */
const FLAG_ABSENT = 1;
const FLAG_NIL = 3;
const PRECOMMIT = 2;

export class ConversionError extends Error {
  override name = "ConversionError";
}

/** Every attribute of the events as a tag `<event type>.<attribute key>`, in order. */
export function eventsToTags(events: readonly CometEvent[]): Tag[] {
  return events.flatMap((e) => e.attributes.map((a) => ({ key: `${e.type}.${a.key}`, value: a.value, index: a.index })));
}

const int = z.union([z.string(), z.number()]);
const duplicateVote = z.object({
  type: z.literal("tendermint/DuplicateVoteEvidence"),
  value: z.object({
    vote_a: z.object({ height: int, validator_address: z.string() }),
    TotalVotingPower: int,
    ValidatorPower: int,
    Timestamp: z.string(),
  }),
});
const lightClientAttack = z.object({
  type: z.literal("tendermint/LightClientAttackEvidence"),
  value: z.object({
    common_height: int,
    byzantine_validators: z.array(z.object({ address: z.string(), pub_key: z.record(z.string(), z.unknown()).nullish(), voting_power: int })).nullish(),
    total_voting_power: int,
    timestamp: z.string(),
  }),
});

/**
 * Evidence in the served shape (types.ts): a duplicate vote names its validator; a light-client attack gives
 * one item per byzantine validator. Anything else keeps its type with empty details.
 */
function toEvidence(item: unknown): Evidence[] {
  const dv = duplicateVote.safeParse(item);
  if (dv.success) {
    const v = dv.data.value;
    return [
      {
        type: dv.data.type,
        height: v.vote_a.height,
        time: v.Timestamp,
        total_voting_power: v.TotalVotingPower,
        validator: { pub_key: {}, voting_power: v.ValidatorPower, address: v.vote_a.validator_address },
      },
    ];
  }
  const lc = lightClientAttack.safeParse(item);
  if (lc.success) {
    const v = lc.data.value;
    return (v.byzantine_validators ?? []).map((val) => ({
      type: lc.data.type,
      height: v.common_height,
      time: v.timestamp,
      total_voting_power: v.total_voting_power,
      validator: { pub_key: val.pub_key ?? {}, voting_power: val.voting_power, address: val.address },
    }));
  }
  const type = typeof item === "object" && item !== null && typeof (item as { type?: unknown }).type === "string" ? (item as { type: string }).type : "unknown";
  return [{ type, height: "0", time: "", total_voting_power: "0", validator: { pub_key: {}, voting_power: "0", address: "" } }];
}

function decodeTx(tx: string, height: string, index: number): Uint8Array {
  try {
    return fromBase64(tx);
  } catch {
    throw new ConversionError(`block ${height}: tx ${index} is not valid base64`);
  }
}

export interface ConvertOptions {
  /** Told about inconsistencies that do not stop ingestion (a data_hash that does not match the txs). */
  warn?: (message: string) => void;
  /** The /block and /block_results results as the node sent them: kept as the block's native JSON. */
  raw?: { block: unknown; results: unknown };
}

/** Builds the block to store from a node's /block and /block_results of the same height. */
export function toIngestBlock(block: CometBlock, results: CometBlockResults, opts: ConvertOptions = {}): IngestBlock {
  const h = block.block.header;
  if (results.height !== h.height) throw new ConversionError(`block ${h.height}: block_results are for height ${results.height}`);
  const encoded = block.block.data.txs ?? [];
  const raws = encoded.map((tx, i) => decodeTx(tx, h.height, i));
  if (results.txs_results.length !== raws.length) {
    throw new ConversionError(`block ${h.height}: ${raws.length} txs but ${results.txs_results.length} tx results`);
  }
  const computed = dataHash(raws);
  // CometBFT before v0.38 wrote an empty data_hash for a block without txs.
  if (h.data_hash.toUpperCase() !== computed && !(raws.length === 0 && h.data_hash === "")) {
    opts.warn?.(`block ${h.height}: header data_hash ${h.data_hash} does not match its ${raws.length} txs (${computed})`);
  }

  const header: Header = {
    version: { block: h.version.block, app: h.version.app },
    chain_id: h.chain_id,
    height: h.height,
    time: h.time,
    last_block_id: h.last_block_id,
    last_commit_hash: h.last_commit_hash,
    data_hash: h.data_hash,
    validators_hash: h.validators_hash,
    next_validators_hash: h.next_validators_hash,
    consensus_hash: h.consensus_hash,
    app_hash: h.app_hash,
    last_results_hash: h.last_results_hash,
    evidence_hash: h.evidence_hash,
    proposer_address: h.proposer_address,
  };

  const lc = block.block.last_commit;
  const signatures: CommitSig[] = [];
  (lc?.signatures ?? []).forEach((s, i) => {
    // An absent validator signed nothing; its position still numbers the others.
    if (s.block_id_flag === FLAG_ABSENT || s.signature === null || !lc) return;
    signatures.push({
      type: PRECOMMIT,
      height: lc.height,
      round: lc.round,
      block_id: s.block_id_flag === FLAG_NIL ? zeroBlockId() : lc.block_id,
      timestamp: s.timestamp,
      validator_address: s.validator_address,
      validator_index: i,
      signature: s.signature,
    });
  });

  const txs = raws.map((raw, i) => {
    const r = results.txs_results[i]!;
    return { raw, hash: txHash(raw), result: { log: r.log, gas_wanted: r.gas_wanted, gas_used: r.gas_used, tags: eventsToTags(r.events) } };
  });
  const blockEvents = [...results.begin_block_events, ...results.finalize_block_events, ...results.end_block_events];
  // As CometBFT's block indexer: only attributes the application marked for indexing are searchable.
  const blockAttrs: IngestAttr[] = eventsToTags(blockEvents)
    .filter((t) => t.index)
    .map((t) => ({ key: t.key, value: t.value }));

  return {
    height: BigInt(h.height),
    result: {
      block_id: block.block_id,
      block: {
        header,
        data: encoded,
        evidence: (block.block.evidence?.evidence ?? []).flatMap(toEvidence),
        last_commit: {
          height: lc ? Number(lc.height) : 0,
          round: lc?.round ?? 0,
          block_id: lc?.block_id ?? zeroBlockId(),
          signatures,
        },
      },
    },
    txs,
    blockAttrs,
    native: opts.raw && {
      block: opts.raw.block,
      results: opts.raw.results,
      execs: ((opts.raw.results as { txs_results?: unknown[] | null }).txs_results ?? []).slice(),
    },
  };
}
