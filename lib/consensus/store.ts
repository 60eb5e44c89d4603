import { db } from "@/lib/db/client";
import { attributeTime, leadingNumber } from "./query/literals";
import type { BlockResult, IngestAttr, IngestBlock, TxRecord, TxResult } from "./types";

/** Rows per INSERT statement (kept well under PostgreSQL's 65,535 bind parameters). */
const ROWS_PER_STATEMENT = 2000;

/** Longest value that is indexed: B-tree entries are limited to about 2.7 kB. */
const MAX_INDEXED_VALUE = 2048;

/**
 * The columns numeric and time comparisons use, with the query compiler's own definitions. A
 * leading number too large for the column (over 35 integer digits) is not comparable.
 */
function attrColumns(value: string): [string | null, string | null] {
  const num = leadingNumber(value);
  return [num !== null && num.split(".")[0]!.length <= 35 ? num : null, attributeTime(value) ? value : null];
}

interface Column {
  name: string;
  /** PostgreSQL type to cast the parameter to, where the driver cannot infer it. */
  cast?: string;
}

async function insertRows(run: (sql: string, values: unknown[]) => Promise<unknown>, table: string, columns: Column[], rows: unknown[][]) {
  const names = columns.map((c) => c.name).join(", ");
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    const values: unknown[] = [];
    const tuples = chunk.map((row) => {
      const placeholders = columns.map((c, j) => `$${values.length + j + 1}${c.cast ? `::${c.cast}` : ""}`);
      values.push(...row);
      return `(${placeholders.join(", ")})`;
    });
    await run(`INSERT INTO ${table} (${names}) VALUES ${tuples.join(", ")}`, values);
  }
}

const cols = (...names: Array<string | [string, string]>): Column[] => names.map((n) => (typeof n === "string" ? { name: n } : { name: n[0], cast: n[1] }));
const BLOCK_COLUMNS = cols("network", "height", "hash", "time", "num_txs", ["body", "json"]);
const TX_COLUMNS = cols("network", "height", "tx_index", "hash", "raw", ["result", "json"]);
const TX_ATTR_COLUMNS = cols("network", "height", "tx_index", "key", "value", ["num", "numeric"], ["time", "timestamptz"]);
const BLOCK_ATTR_COLUMNS = cols("network", "height", "key", "value", ["num", "numeric"], ["time", "timestamptz"]);

/**
 * Stores blocks with their transactions and event attributes in one transaction, so a block is
 * either fully queryable or absent. Blocks already stored are skipped (idempotent re-ingestion).
 */
export async function insertBlocks(network: string, blocks: IngestBlock[]): Promise<void> {
  if (blocks.length === 0) return;
  const blockRows: unknown[][] = [];
  const txRows: unknown[][] = [];
  const txAttrRows: unknown[][] = [];
  const blockAttrRows: unknown[][] = [];
  for (const b of blocks) {
    const header = b.result.block.header;
    blockRows.push([network, b.height, b.result.block_id.hash, new Date(header.time), b.txs.length, JSON.stringify(b.result)]);
    b.txs.forEach((tx, index) => {
      txRows.push([network, b.height, index, tx.hash, Buffer.from(tx.raw), JSON.stringify(tx.result)]);
      for (const tag of tx.result.tags) {
        if (!tag.index || tag.value.length > MAX_INDEXED_VALUE) continue;
        txAttrRows.push([network, b.height, index, tag.key, tag.value, ...attrColumns(tag.value)]);
      }
    });
    for (const a of b.blockAttrs) {
      if (a.value.length <= MAX_INDEXED_VALUE) blockAttrRows.push([network, b.height, a.key, a.value, ...attrColumns(a.value)]);
    }
  }
  await db().$transaction(
    async (tx) => {
      const run = (sql: string, values: unknown[]) => tx.$executeRawUnsafe(sql, ...values);
      const heights = blocks.map((b) => b.height);
      const existing = await tx.$queryRawUnsafe<{ height: bigint }[]>(
        "SELECT height FROM consensus_blocks WHERE network = $1 AND height = ANY($2::bigint[])",
        network,
        heights,
      );
      if (existing.length > 0) {
        const skip = new Set(existing.map((r) => r.height));
        const keep = (row: unknown[]) => !skip.has(row[1] as bigint);
        blockRows.splice(0, blockRows.length, ...blockRows.filter(keep));
        txRows.splice(0, txRows.length, ...txRows.filter(keep));
        txAttrRows.splice(0, txAttrRows.length, ...txAttrRows.filter(keep));
        blockAttrRows.splice(0, blockAttrRows.length, ...blockAttrRows.filter(keep));
      }
      await insertRows(run, "consensus_blocks", BLOCK_COLUMNS, blockRows);
      await insertRows(run, "consensus_txs", TX_COLUMNS, txRows);
      await insertRows(run, "consensus_tx_attrs", TX_ATTR_COLUMNS, txAttrRows);
      await insertRows(run, "consensus_block_attrs", BLOCK_ATTR_COLUMNS, blockAttrRows);
    },
    { timeout: 120_000 },
  );
}

export interface ChainHead {
  latest: { height: bigint; hash: string; time: Date; body: BlockResult };
  earliest: { height: bigint; hash: string; time: Date; body: BlockResult };
}

/** Latest and earliest stored blocks, or null when the chain has none yet. */
export async function chainHead(network: string): Promise<ChainHead | null> {
  const select = { height: true, hash: true, time: true, body: true } as const;
  const [latest, earliest] = await Promise.all([
    db().consensusBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select }),
    db().consensusBlock.findFirst({ where: { network }, orderBy: { height: "asc" }, select }),
  ]);
  if (!latest || !earliest) return null;
  return {
    latest: { ...latest, body: latest.body as unknown as BlockResult },
    earliest: { ...earliest, body: earliest.body as unknown as BlockResult },
  };
}

export async function latestHeight(network: string): Promise<bigint | null> {
  const row = await db().consensusBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select: { height: true } });
  return row?.height ?? null;
}

export async function getBlock(network: string, height: bigint): Promise<BlockResult | null> {
  const row = await db().consensusBlock.findUnique({ where: { network_height: { network, height } }, select: { body: true } });
  return (row?.body as unknown as BlockResult | undefined) ?? null;
}

export interface StoredTx {
  height: bigint;
  index: number;
  hash: string;
  raw: Uint8Array;
  result: TxResult;
}

export function toTxRecord(t: StoredTx): TxRecord {
  return { hash: t.hash, height: t.height.toString(), index: t.index, tx_result: t.result, tx: Buffer.from(t.raw).toString("base64") };
}

export async function getTxByHash(network: string, hash: string): Promise<StoredTx | null> {
  // The same bytes may be included twice; like CometBFT's indexer, answer the latest.
  const row = await db().consensusTx.findFirst({ where: { network, hash }, orderBy: { height: "desc" } });
  return row ? { height: row.height, index: row.txIndex, hash: row.hash, raw: row.raw, result: row.result as unknown as TxResult } : null;
}

/** Raw transactions of a block in order (for proofs). */
export async function blockTxs(network: string, height: bigint): Promise<Uint8Array[]> {
  const rows = await db().consensusTx.findMany({ where: { network, height }, orderBy: { txIndex: "asc" }, select: { raw: true } });
  return rows.map((r) => r.raw);
}

export type { IngestAttr };
