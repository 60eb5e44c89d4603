/**
 * CometBFT 0.38's own JSON (https://docs.cometbft.com/v0.38/rpc/) of what the index holds: the one
 * place where the shapes /rpc serves (types.ts) and a node's JSON meet. Go's encoding rules apply:
 * int64 and int as decimal strings, int32/uint32/enums as numbers, []byte as base64 (a nil one as
 * null, and a nil slice of anything as null), HexBytes (hashes, addresses) as upper-case hex, times
 * as RFC 3339 with nanoseconds and no trailing zeros, and ABCI results with or without their
 * default fields by where they appear (ABCI RESULTS below).
 *
 * Blocks are converted once, when they are stored (store.ts insertBlocks): an upstream's blocks keep
 * the JSON its node sent; a devnet block gets what a node would send for it.
 */
import type { Network } from "@/lib/networks";
import { encodeBlockId, encodeCommitSig, encodeTimestamp, formatTimestamp, fromBase64, fromHex, parseInt64, parseTimestamp, parseUint64, ProtoWriter, toBase64, type BlockId, type TxProof } from "./crypto";
import type { BlockResult, CommitSig, Header, IngestAttr, IngestBlock, IngestTx, NativeParts, Tag, TxResult } from "./types";

/** BlockIDFlag of a commit signature. */
export const BLOCK_ID_FLAG = { Absent: 1, Commit: 2, Nil: 3 } as const;

export interface NativeCommitSig {
  block_id_flag: number;
  validator_address: string;
  timestamp: string;
  /** base64; null for an absent validator. */
  signature: string | null;
}

export interface NativeCommit {
  height: string;
  round: number;
  block_id: BlockId;
  signatures: NativeCommitSig[];
}

/** The /block result. */
export interface NativeBlock {
  block_id: BlockId;
  block: {
    header: Header;
    data: { txs: string[] };
    evidence: { evidence: unknown[] };
    last_commit: NativeCommit;
  };
}

// ---------------------------------------------------------------------------------------------
// ABCI RESULTS. Where CometBFT 0.38 writes every field of an ABCI result and where it leaves the
// empty ones out:
//
// - ExecTxResult, ResponseCheckTx, ResponseQuery, ResponseCommit and EventAttribute have a
//   MarshalJSON (pointer receiver) that is gogoproto's jsonpb with EnumsAsInts and EmitDefaults
//   (abci/types/types.go, "override JSON marshaling so we emit defaults"): every field, in proto
//   field order, under its proto name (types.proto gives gas_wanted and gas_used json_name =
//   "gas_wanted"/"gas_used"), uint32 as a number, int64 as a quoted string, bytes as base64 and a
//   nil []byte as null (encoding/json; results read back from protobuf have nil for empty bytes),
//   repeated fields as [] even when empty, nested messages (Event) with every field too
//   (jsonpb/jsonpb.go marshalObject, marshalValue).
// - The RPC's encoder (libs/json/encoder.go encodeReflect) calls a pointer-receiver MarshalJSON only
//   where the value is addressable (`rv.CanAddr() && rv.Addr().Type().Implements(jsonMarshalerType)`),
//   and otherwise writes the struct by its json tags, all `omitempty` in types.pb.go. Addressable:
//   a field of a struct reached through a pointer, and any slice element. So the results of /tx
//   (*ResultTx.TxResult), /tx_search, /block_results (TxsResults []*ExecTxResult), /check_tx,
//   /abci_query and /broadcast_tx_commit (rpc/core/types/responses.go) carry every field, and so do
//   the tx_results of NewBlock's result_finalize_block ([]*ExecTxResult).
// - An event's data sits in an interface (types/events.go TMEventData), and a value inside an
//   interface is not addressable: the Tx event's TxResult.Result, an ExecTxResult value field of
//   abci.TxResult, is written by its tags, empty fields left out. Its Event slice elements are
//   addressable but Event has no MarshalJSON (`type` and `attributes` left out when empty); their
//   attributes are slice elements again, so each EventAttribute carries key, value and index. The
//   same holds for block_results' finalize_block_events ([]abci.Event).
// - Anything else is written by its tags (abci_info's ResponseInfo leaves app_version 0 out).
//
// https://github.com/cometbft/cometbft/blob/v0.38.17/abci/types/types.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/libs/json/encoder.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/rpc/core/types/responses.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/types/events.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/proto/tendermint/abci/types.proto
// https://github.com/cosmos/gogoproto/blob/main/jsonpb/jsonpb.go

export interface NativeAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface NativeEvent {
  type: string;
  attributes: NativeAttribute[];
}

/** An ExecTxResult with every field (ResponseCheckTx of 0.38 has the same fields). */
export interface NativeExecResult {
  code: number;
  /** base64; null when empty. */
  data: string | null;
  log: string;
  info: string;
  gas_wanted: string;
  gas_used: string;
  events: NativeEvent[];
  codespace: string;
}

/** An event as stored: a node's, or one an older version wrote (no `index` on an attribute not indexed). */
export interface StoredEvent {
  type?: string;
  attributes?: ReadonlyArray<{ key?: string; value?: string; index?: boolean }> | null;
}

/** An ExecTxResult as stored: a node's, or one an older version wrote (zero values left out). */
export type StoredExecResult = Partial<Omit<NativeExecResult, "events">> & { events?: readonly StoredEvent[] | null };

/** The fields of an ExecTxResult in proto order, with the value each has when empty. */
const EXEC_FIELDS = [
  ["code", 0],
  ["data", null],
  ["log", ""],
  ["info", ""],
  ["gas_wanted", "0"],
  ["gas_used", "0"],
  ["events", []],
  ["codespace", ""],
] as const;

const isEmpty = (v: unknown, empty: unknown) => v === undefined || v === null || v === empty || v === "" || (Array.isArray(v) && v.length === 0);

/** An event: with every field (jsonpb), or by its struct tags (empty type and attributes left out); each attribute with every field. */
function eventJson(e: StoredEvent, emitDefaults: boolean): Partial<NativeEvent> {
  const attributes = (e.attributes ?? []).map((a) => ({ key: a.key ?? "", value: a.value ?? "", index: a.index === true }));
  if (emitDefaults) return { type: e.type ?? "", attributes };
  const out: Partial<NativeEvent> = {};
  if (e.type) out.type = e.type;
  if (attributes.length > 0) out.attributes = attributes;
  return out;
}

function execJson(r: StoredExecResult, emitDefaults: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, empty] of EXEC_FIELDS) {
    const v = r[name];
    if (isEmpty(v, empty)) {
      if (emitDefaults) out[name] = Array.isArray(empty) ? [] : empty;
    } else out[name] = name === "events" ? (v as StoredEvent[]).map((e) => eventJson(e, emitDefaults)) : v;
  }
  return out;
}

/** An ExecTxResult as /tx, /tx_search and /block_results write it: every field (jsonpb with EmitDefaults). */
export const execResultJson = (r: StoredExecResult): NativeExecResult => execJson(r, true) as unknown as NativeExecResult;

/** The `result` of a Tx event's TxResult: empty fields left out, attributes still with every field. */
export const txEventResultJson = (r: StoredExecResult): Partial<NativeExecResult> => execJson(r, false);

// ---------------------------------------------------------------------------------------------
// BLOCK RESULTS. /block_results is rpc/core/types ResultBlockResults, filled from the
// ResponseFinalizeBlock the node stored as protobuf and reads back (rpc/core/blocks.go BlockResults,
// state/store.go LoadFinalizeBlockResponse). Unmarshalled protobuf leaves an empty repeated field a
// nil slice, so an empty txs_results, finalize_block_events or validator_updates is written null,
// as is an absent consensus_param_updates (a nil pointer). AppHash is []byte, not HexBytes: base64.
//
// https://github.com/cometbft/cometbft/blob/v0.38.17/rpc/core/types/responses.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/rpc/core/blocks.go
// https://github.com/cometbft/cometbft/blob/v0.38.17/state/store.go

/** A /block_results result as stored; its other fields are kept as they are. */
export interface StoredBlockResults {
  txs_results?: readonly StoredExecResult[] | null;
  finalize_block_events?: readonly StoredEvent[] | null;
  validator_updates?: readonly unknown[] | null;
  consensus_param_updates?: unknown;
  /** base64; upper-case hex in rows an older version stored. */
  app_hash?: string | null;
  [field: string]: unknown;
}

/** A repeated field as the node reads it back from its store: empty is nil, written null. */
const nilIfEmpty = <T>(list: readonly T[] | null | undefined): readonly T[] | null => (list && list.length > 0 ? list : null);

/** A []byte held as hex (how the index keeps hashes) as the node's encoder writes it: base64, null when empty. */
export const bytesJson = (hex: string): string | null => (hex === "" ? null : toBase64(fromHex(hex)));

/** A 32-byte hash in hex, as older versions wrote block_results' app_hash (its base64 has 44 characters, with padding). */
const HEX_HASH = /^[0-9A-F]{64}$/;

/** A /block_results result of ours (whatever version stored it) as a node writes it. */
export function blockResultsJson(r: StoredBlockResults): StoredBlockResults {
  const appHash = r.app_hash ?? "";
  return {
    ...r,
    txs_results: nilIfEmpty(r.txs_results?.map(execResultJson)),
    finalize_block_events: nilIfEmpty(r.finalize_block_events?.map((e) => eventJson(e, false))),
    validator_updates: nilIfEmpty(r.validator_updates),
    consensus_param_updates: r.consensus_param_updates ?? null,
    app_hash: HEX_HASH.test(appHash) ? bytesJson(appHash) : appHash || null,
  };
}

/**
 * Whether a network's stored native JSON is ours (a devnet's), written as a node writes it when it
 * is read (rows stored by older versions lack default fields), rather than its node's, served as sent.
 */
export const nativeIsOurs = (network: Pick<Network, "source">): boolean => network.source.kind !== "upstream";

/** A time as Go's RFC3339Nano writes it (UTC, trailing zeros of the fraction removed). */
export const goTime = (text: string): string => formatTimestamp(parseTimestamp(text));

/** Consecutive tags of one event type become one event, attributes in order (`a.b.c` → type a, key b.c). */
export function tagsToEvents(tags: readonly Tag[]): NativeEvent[] {
  const events: NativeEvent[] = [];
  for (const tag of tags) {
    const dot = tag.key.indexOf(".");
    const type = dot === -1 ? tag.key : tag.key.slice(0, dot);
    const key = dot === -1 ? "" : tag.key.slice(dot + 1);
    const attribute = { key, value: tag.value, index: tag.index };
    const last = events.at(-1);
    if (last?.type === type) last.attributes.push(attribute);
    else events.push({ type, attributes: [attribute] });
  }
  return events;
}

/** A stored tx result (log, gas, tags) as a node writes its ExecTxResult. */
export const execResultOf = (r: TxResult): NativeExecResult => execResultJson({ log: r.log, gas_wanted: r.gas_wanted, gas_used: r.gas_used, events: tagsToEvents(r.tags) });

/**
 * A stored /rpc block body in the native shape: commit signatures as block_id_flag entries (a gap
 * in validator_index is an absent validator), times in Go's format.
 */
export function nativeBlockOf(body: BlockResult): NativeBlock {
  const { header, last_commit: lc } = body.block;
  return {
    block_id: body.block_id,
    block: {
      header: { ...header, time: goTime(header.time) },
      data: { txs: body.block.data },
      evidence: { evidence: body.block.evidence },
      last_commit: nativeCommitOf(BigInt(lc.height), lc.round, lc.block_id, lc.signatures),
    },
  };
}

/** A commit (the /rpc shape's votes) as CometBFT's Commit. */
export function nativeCommitOf(height: bigint, round: number, blockId: BlockId, votes: readonly CommitSig[]): NativeCommit {
  const signatures: NativeCommitSig[] = [];
  for (const s of votes) {
    while (signatures.length < s.validator_index) signatures.push({ block_id_flag: BLOCK_ID_FLAG.Absent, validator_address: "", timestamp: "0001-01-01T00:00:00Z", signature: null });
    signatures.push({
      block_id_flag: s.block_id.hash === "" ? BLOCK_ID_FLAG.Nil : BLOCK_ID_FLAG.Commit,
      validator_address: s.validator_address,
      timestamp: goTime(s.timestamp),
      signature: s.signature,
    });
  }
  return { height: height.toString(), round, block_id: blockId, signatures };
}

/** The /block_results of a block from its txs' results, its (indexed) block events and the app hash after it (hex). */
export function nativeResultsOf(height: bigint, execs: readonly unknown[], blockAttrs: readonly IngestAttr[], appHash: string) {
  return {
    height: height.toString(),
    txs_results: nilIfEmpty(execs),
    finalize_block_events: nilIfEmpty(tagsToEvents(blockAttrs.map((a) => ({ key: a.key, value: a.value, index: true })))),
    validator_updates: null,
    consensus_param_updates: null,
    app_hash: bytesJson(appHash),
  };
}

/**
 * The native parts of a block about to be stored: what came with it (an upstream's JSON, the
 * devnet's), else derived from the /rpc shapes (the app hash after the block then unknown: the header's).
 */
export function nativeOf(b: IngestBlock): NativeParts {
  if (b.native) return b.native;
  const execs = b.txs.map((t: IngestTx) => execResultOf(t.result));
  return { block: nativeBlockOf(b.result), results: nativeResultsOf(b.height, execs, b.blockAttrs, b.result.block.header.app_hash), execs };
}

/** A tx as /tx and /tx_search answer it. */
export function nativeTx(t: { hash: string; height: string; index: number; tx: string }, exec: unknown, proof?: TxProof) {
  const out: Record<string, unknown> = { hash: t.hash, height: t.height, index: t.index, tx_result: exec, tx: t.tx };
  if (proof) out.proof = { root_hash: proof.RootHash, data: proof.Data, proof: proof.Proof };
  return out;
}

// ---------------------------------------------------------------------------------------------
// block_size of /blockchain: the length of the block's protobuf encoding (tendermint.types.Block).

const hexBytes = (hex: string) => fromHex(hex);

function encodeHeader(h: Header): Uint8Array {
  const w = new ProtoWriter()
    .message(1, new ProtoWriter().uint64(1, parseUint64(h.version.block, "version.block")).uint64(2, parseUint64(h.version.app, "version.app")).finish())
    .string(2, h.chain_id)
    .int64(3, parseInt64(h.height, "height"))
    .message(4, encodeTimestamp(parseTimestamp(h.time)))
    .message(5, encodeBlockId(h.last_block_id));
  const hashes = [h.last_commit_hash, h.data_hash, h.validators_hash, h.next_validators_hash, h.consensus_hash, h.app_hash, h.last_results_hash, h.evidence_hash, h.proposer_address];
  hashes.forEach((v, i) => w.bytes(6 + i, hexBytes(v)));
  return w.finish();
}

function encodeCommit(c: NativeCommit): Uint8Array {
  const w = new ProtoWriter().int64(1, parseInt64(c.height, "height")).int64(2, BigInt(c.round)).message(3, encodeBlockId(c.block_id));
  for (const s of c.signatures) w.message(4, encodeCommitSig(s));
  return w.finish();
}

/**
 * The protobuf size of a block without evidence (what the devnet makes); undefined when it has
 * evidence, whose encoding is not reproduced here.
 */
export function blockSize(b: NativeBlock): number | undefined {
  if (b.block.evidence.evidence.length > 0) return undefined;
  const data = new ProtoWriter();
  for (const tx of b.block.data.txs) data.message(1, fromBase64(tx));
  return new ProtoWriter()
    .message(1, encodeHeader(b.block.header))
    .message(2, data.finish())
    .message(3, new Uint8Array())
    .message(4, encodeCommit(b.block.last_commit))
    .finish().length;
}
