/**
 * Aptos as a source of webhook messages: the chain head, blocks by height, and the user
 * transactions of a block range in the TRANSACTION message shape, read from the index. The
 * webhook engine wraps these into its chain source for aptos/mainnet and aptos/testnet.
 *
 * Aptos is final at commit (no reorganisations): a stored block never changes, so `isInstant`
 * makes no difference on these networks.
 *
 * TRANSACTION message: a user transaction exactly as the fullnode's REST API answers it, without
 * its write-set `changes`: version, hash, state_change_hash, event_root_hash,
 * state_checkpoint_hash, gas_used, success, vm_status, accumulator_root_hash, sender,
 * sequence_number, max_gas_amount, gas_unit_price, expiration_timestamp_secs, payload, signature,
 * events, timestamp (µs), type. Failed transactions (success false) are user transactions too.
 *
 * BLOCK_PERIOD message on Aptos: the block as `GET /v1/blocks/by_height/<height>` answers it,
 * with `transactions` holding the hashes of all its transactions (block metadata and state
 * checkpoint included) in version order:
 * `{ block_height, block_hash, block_timestamp (µs), first_version, last_version, transactions }`,
 * every number a decimal string as the fullnode writes them.
 */
import { db } from "@/lib/db/client";
import { blockFields } from "./rest";
import { blockByHeight, blocksByHeight, type StoredBlock } from "./store";
import type { UserTransactionJson } from "./types";

export type AptosTransactionMessage = Omit<UserTransactionJson, "changes">;

export interface AptosBlockMessage {
  block_height: string;
  block_hash: string;
  block_timestamp: string;
  first_version: string;
  last_version: string;
  transactions: string[];
}

export interface AptosBlockSummary {
  height: bigint;
  hash: string;
  firstVersion: bigint;
  lastVersion: bigint;
  /** Microseconds since the Unix epoch. */
  timestamp: bigint;
  transactionHashes: string[];
}

const summary = (b: StoredBlock): AptosBlockSummary => ({
  height: b.height,
  hash: b.hash,
  firstVersion: b.firstVersion,
  lastVersion: b.lastVersion,
  timestamp: b.timestamp,
  transactionHashes: b.txHashes,
});

/** The newest stored block's height, or null before the first. */
export async function aptosHeadHeight(network: string): Promise<bigint | null> {
  const row = await db().aptosBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select: { height: true } });
  return row?.height ?? null;
}

export async function aptosBlockAt(network: string, height: bigint): Promise<AptosBlockSummary | null> {
  const b = await blockByHeight(network, height);
  return b ? summary(b) : null;
}

export async function aptosBlocks(network: string, fromHeight: bigint, toHeight: bigint): Promise<AptosBlockSummary[]> {
  return (await blocksByHeight(network, fromHeight, toHeight)).map(summary);
}

export function blockPeriodMessage(b: AptosBlockSummary): AptosBlockMessage {
  return { ...blockFields(b), transactions: b.transactionHashes };
}

export interface AptosUserTransaction {
  blockHeight: bigint;
  blockHash: string;
  version: bigint;
  message: AptosTransactionMessage;
}

function toMessage(body: string): AptosTransactionMessage {
  const { changes: _changes, ...message } = JSON.parse(body) as UserTransactionJson;
  return message;
}

interface TxRow {
  version: bigint;
  block_height: bigint;
  hash: string;
  body: string;
}

async function withBlockHashes(network: string, rows: TxRow[]): Promise<AptosUserTransaction[]> {
  if (rows.length === 0) return [];
  const heights = [...new Set(rows.map((r) => r.block_height))];
  const blocks = await db().aptosBlock.findMany({ where: { network, height: { in: heights } }, select: { height: true, hash: true } });
  const hashes = new Map(blocks.map((b) => [b.height, b.hash]));
  return rows.map((r) => ({ blockHeight: r.block_height, blockHash: hashes.get(r.block_height) ?? "", version: r.version, message: toMessage(r.body) }));
}

/** Every user transaction of blocks fromHeight..toHeight, in version order, with its events. */
export async function aptosUserTransactions(network: string, fromHeight: bigint, toHeight: bigint): Promise<AptosUserTransaction[]> {
  const rows = await db().$queryRaw<TxRow[]>`
    SELECT version, block_height, hash, body::text AS body FROM aptos_transactions
    WHERE network = ${network} AND block_height BETWEEN ${fromHeight} AND ${toHeight} AND type = 'user_transaction'
    ORDER BY version`;
  return withBlockHashes(network, rows);
}

/**
 * An address as the REST API writes it: `0x` and one hex digit for the special addresses 0x0 to
 * 0xf (`0x0`, `0x1`), `0x` and 64 hex digits for every other; null when it is not an address.
 */
export function standardAddress(text: string): string | null {
  const hex = text.startsWith("0x") || text.startsWith("0X") ? text.slice(2) : text;
  if (!/^[0-9a-fA-F]{1,64}$/.test(hex)) return null;
  const long = hex.toLowerCase().padStart(64, "0");
  return /^0{63}[0-9a-f]$/.test(long) ? `0x${long.at(-1)}` : `0x${long}`;
}

/**
 * Whether event data matches an eventData filter: every key of the filter is in the data with an
 * equal value; a filter value that is an object is compared key by key the same way (nested
 * objects), any other value exactly (a string "10" is not the number 10; arrays element by element).
 */
export function eventDataMatches(filter: Record<string, unknown>, data: unknown): boolean {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return false;
  const record = data as Record<string, unknown>;
  return Object.entries(filter).every(([key, want]) => {
    if (!Object.hasOwn(record, key)) return false;
    const have = record[key];
    if (want !== null && typeof want === "object" && !Array.isArray(want)) return eventDataMatches(want as Record<string, unknown>, have);
    return JSON.stringify(want) === JSON.stringify(have);
  });
}

/** The newest stored user transaction as a TRANSACTION message, or null when there is none. */
export async function aptosLatestUserTransaction(network: string): Promise<AptosTransactionMessage | null> {
  const rows = await db().$queryRaw<Array<{ body: string }>>`
    SELECT body::text AS body FROM aptos_transactions
    WHERE network = ${network} AND type = 'user_transaction' ORDER BY version DESC LIMIT 1`;
  return rows[0] ? toMessage(rows[0].body) : null;
}
