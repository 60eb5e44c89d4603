/**
 * From the fullnode's JSON to what the index stores: each transaction checked for the fields the
 * index reads (the rest is kept as it came), and consecutive transactions grouped into blocks the
 * way the chain writes them: a block opens with its block metadata transaction (or the genesis
 * transaction) and closes with a state checkpoint or block epilogue transaction.
 */
import { z } from "zod";
import type { AptosEventJson, IngestBlock, IngestTx, TransactionJson } from "./types";

/** The node sent something that is not a well-formed transaction or block. */
export class ConversionError extends Error {
  override name = "ConversionError";
}

/** Transaction types that open a block. */
export const BLOCK_START_TYPES: ReadonlySet<string> = new Set(["block_metadata_transaction", "genesis_transaction"]);
/** Transaction types that close a block. */
export const BLOCK_END_TYPES: ReadonlySet<string> = new Set(["state_checkpoint_transaction", "block_epilogue_transaction"]);

export const U64_TEXT = /^(0|[1-9]\d{0,19})$/;
const u64 = z.string().regex(U64_TEXT, "not a u64 in decimal");
const hash = z.string().regex(/^0x[0-9a-f]{64}$/, "not a 32-byte hash");

const eventSchema = z.looseObject({
  guid: z.looseObject({ creation_number: u64, account_address: z.string().min(3).max(70) }),
  sequence_number: u64,
  type: z.string().min(1).max(10_000),
  data: z.unknown(),
});

const txSchema = z.looseObject({
  version: u64,
  hash,
  type: z.string().min(1).max(100),
  success: z.boolean(),
  events: z.array(eventSchema).optional(),
  sender: z.string().optional(),
  sequence_number: u64.optional(),
  payload: z.looseObject({ type: z.string(), function: z.string().optional() }).optional(),
});

/** Fits a PostgreSQL bigint (versions, heights, sequence numbers of accounts). */
const INT64_MAX = 2n ** 63n - 1n;

function bigintOf(text: string, what: string): bigint {
  const n = BigInt(text);
  if (n > INT64_MAX) throw new ConversionError(`${what} ${text} is beyond what the index stores`);
  return n;
}

/** One transaction as the node sent it, with the columns the index reads. */
export function toIngestTx(raw: unknown): IngestTx {
  const parsed = txSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConversionError(`malformed transaction${issue ? ` at ${issue.path.join(".") || "(root)"}: ${issue.message}` : ""}`);
  }
  const t = parsed.data;
  const user = t.type === "user_transaction";
  const fn = user && t.payload?.type === "entry_function_payload" ? (t.payload.function ?? null) : null;
  return {
    version: bigintOf(t.version, "version"),
    hash: t.hash,
    type: t.type,
    sender: user ? (t.sender ?? null) : null,
    sequenceNumber: user && t.sequence_number !== undefined ? bigintOf(t.sequence_number, "sequence number") : null,
    payloadFunction: fn,
    success: t.success,
    body: raw as TransactionJson,
    events: (t.events ?? []) as AptosEventJson[],
  };
}

export interface BlockHeader {
  height: bigint;
  /** The block metadata's id (zero for the genesis block). */
  hash: string;
  /** Microseconds. */
  timestamp: bigint;
}

export const ZERO_HASH = `0x${"0".repeat(64)}`;

/**
 * The header a block's first transaction gives: its height comes from the caller (the chain's
 * count), checked against the NewBlockEvent's `height` when the transaction carries one.
 */
export function blockHeaderOf(first: IngestTx, height: bigint): BlockHeader & { epoch: bigint | null } {
  const body = first.body as unknown as Record<string, unknown>;
  if (first.type === "genesis_transaction") return { height, hash: ZERO_HASH, timestamp: 0n, epoch: 0n };
  if (first.type !== "block_metadata_transaction") throw new ConversionError(`version ${first.version} (${first.type}) does not open a block`);
  const { id, timestamp, epoch } = body;
  if (typeof id !== "string" || !/^0x[0-9a-f]{64}$/.test(id)) throw new ConversionError(`block metadata ${first.version} has no valid id`);
  if (typeof timestamp !== "string" || !U64_TEXT.test(timestamp)) throw new ConversionError(`block metadata ${first.version} has no valid timestamp`);
  const newBlock = first.events.find((e) => e.type === "0x1::block::NewBlockEvent" || e.type === "0x1::block::NewBlock");
  const said = (newBlock?.data as { height?: unknown } | undefined)?.height;
  if (typeof said === "string" && said !== height.toString()) {
    throw new ConversionError(`block metadata ${first.version} is of block ${said}, expected block ${height}`);
  }
  return { height, hash: id, timestamp: BigInt(timestamp), epoch: typeof epoch === "string" && U64_TEXT.test(epoch) ? BigInt(epoch) : null };
}

/** A block of consecutive transactions, checked to be whole and in order. */
export function toIngestBlock(height: bigint, txs: IngestTx[], previousEpoch: bigint): IngestBlock {
  const first = txs[0];
  if (!first) throw new ConversionError(`block ${height} has no transactions`);
  txs.forEach((t, i) => {
    if (t.version !== first.version + BigInt(i)) throw new ConversionError(`block ${height}: version ${t.version} does not follow ${first.version + BigInt(i) - 1n}`);
  });
  const header = blockHeaderOf(first, height);
  return {
    height,
    hash: header.hash,
    firstVersion: first.version,
    lastVersion: txs.at(-1)!.version,
    timestamp: header.timestamp,
    epoch: header.epoch ?? previousEpoch,
    txs,
  };
}

/**
 * Splits consecutive transactions (starting at a block's first) into whole blocks. The last
 * group is whole when it ends with a closing transaction or when `complete` says the chain has
 * nothing after it; otherwise it is returned as `rest`, to be read again with what follows.
 */
export function splitBlocks(txs: IngestTx[], complete: boolean): { blocks: IngestTx[][]; rest: IngestTx[] } {
  const blocks: IngestTx[][] = [];
  let current: IngestTx[] = [];
  for (const t of txs) {
    if (BLOCK_START_TYPES.has(t.type) && current.length > 0) {
      blocks.push(current);
      current = [];
    }
    current.push(t);
    if (BLOCK_END_TYPES.has(t.type)) {
      blocks.push(current);
      current = [];
    }
  }
  if (current.length > 0 && complete) {
    blocks.push(current);
    current = [];
  }
  return { blocks, rest: current };
}
