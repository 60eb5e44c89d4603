import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { PoolClient } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { db, publicDb, rawTransaction } from "@/lib/db/client";
import { RawJson } from "@/lib/jsonrpc/raw-json";
import { storableExcerpt } from "@/lib/text";
import { workerCursor } from "@/lib/workers/cursor";
import { checkTerm, type LeaderTerm } from "@/lib/workers/leader-lock";
import { blockResultsJson, execResultJson, execResultOf, nativeBlockOf, nativeOf, nativeResultsOf, type StoredBlockResults, type StoredExecResult } from "./native";
import { attributeTime, leadingNumber } from "./query/literals";
import type { BlockResult, IngestAttr, IngestBlock, TxRecord, TxResult } from "./types";

/**
 * The background worker kind that writes a network's index, keyed by the network's slug: the
 * devnet producer and the upstream follower take the same leader lock, so one process writes a
 * network's index whatever its source.
 */
export const INDEX_WRITER_KIND = "consensus-index";

/**
 * The PostgreSQL channel told of every batch of stored blocks, in the storing transaction (so the
 * notification arrives once the blocks are visible, in every process): payload `<network>\t<first
 * height>\t<last height>`. The WebSocket subscriptions of the native interface follow it.
 */
export const BLOCKS_STORED_CHANNEL = "blockgate_consensus_blocks";

// The longest key and value that are indexed, in UTF-8 bytes as stored: a B-tree entry (network,
// key, value, height, tx_index) holds at most 2,704 bytes, and a value of incompressible text
// over it fails the whole batch.
const MAX_INDEXED_KEY = 256;
const MAX_INDEXED_VALUE = 2048;

/**
 * An attribute as the search index holds it, or null when it is not searchable. PostgreSQL text
 * cannot hold NUL or an unpaired surrogate: the index has U+FFFD in their place (storableExcerpt;
 * a query's operands get the same, query/sql.ts), so the attribute is still found, while the tx
 * result keeps what the chain wrote (json holds it escaped). Keys and values too long for a B-tree
 * entry stay in the tx result only.
 */
function indexed(key: string, value: string): { key: string; value: string } | null {
  const k = storableExcerpt(key);
  const v = storableExcerpt(value);
  return Buffer.byteLength(k) <= MAX_INDEXED_KEY && Buffer.byteLength(v) <= MAX_INDEXED_VALUE ? { key: k, value: v } : null;
}

/**
 * The columns numeric and time comparisons use, with the query compiler's own definitions. A
 * leading number too large for the column (over 35 integer digits) is not comparable.
 */
function attrColumns(value: string): [string | null, string | null] {
  const num = leadingNumber(value);
  return [num !== null && num.split(".")[0]!.length <= 35 ? num : null, attributeTime(value)];
}

// COPY's text format: a row per line, fields split by tabs, \N for NULL; backslash, newline,
// carriage return and tab inside a value are escaped.
const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_SPECIALS = /[\\\n\r\t]/g;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A text field of COPY's text format. */
function copyText(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : text;
}

/** A nullable field whose text never needs escaping (a number or an RFC 3339 time). */
const copyPlain = (text: string | null): string => text ?? "\\N";

/** A bytea field in hex form (the backslash of \x escaped like any other). */
const copyBytes = (bytes: Uint8Array): string => `\\\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;

/** The lines of one COPY, built as the rows are (no row arrays), handed over in ~64 kB chunks. */
class CopyLines {
  readonly chunks: string[] = [];
  private current = "";

  add(line: string): void {
    this.current += line;
    if (this.current.length >= 65_536) {
      this.chunks.push(this.current);
      this.current = "";
    }
  }

  done(): string[] {
    if (this.current) this.chunks.push(this.current);
    this.current = "";
    return this.chunks;
  }
}

/**
 * Streams lines into a table with one COPY: the cheapest way into PostgreSQL (no per-row
 * statement, no bind parameters, no array literal to build and parse).
 */
async function copyInto(client: PoolClient, table: string, columns: string, lines: CopyLines): Promise<void> {
  const chunks = lines.done();
  if (chunks.length === 0) return;
  await pipeline(Readable.from(chunks), client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`)));
}

/** Transaction counts per attribute key and per key and value, for one-condition total_counts. */
class AttrStats {
  readonly keys = new Map<string, { txs: number; multi: number }>();
  readonly values = new Map<string, { key: string; value: string; num: string | null; time: string | null; txs: number }>();

  /** Counts one transaction's indexed attributes: each key and each distinct value once. */
  addTx(attrs: Map<string, Set<string>>): void {
    for (const [key, values] of attrs) {
      const k = this.keys.get(key) ?? { txs: 0, multi: 0 };
      k.txs += 1;
      if (values.size > 1) k.multi += 1;
      this.keys.set(key, k);
      for (const value of values) {
        const id = `${key}\u0000${value}`;
        const v = this.values.get(id);
        if (v) v.txs += 1;
        else {
          const [num, time] = attrColumns(value);
          this.values.set(id, { key, value, num, time, txs: 1 });
        }
      }
    }
  }

  /**
   * Adds the counts to the stored ones (same transaction as the rows they count); with `sign` -1,
   * takes them off (the rows went) and removes the counters left at zero.
   */
  async save(client: PoolClient, network: string, sign: 1 | -1 = 1): Promise<void> {
    if (this.keys.size === 0) return;
    // Sorted: concurrent writers lock the counter rows in one order.
    const byId = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);
    const keys = [...this.keys].sort(byId);
    await client.query(
      `INSERT INTO consensus_attr_keys (network, key, txs, multi_txs)
       SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[])
       ON CONFLICT (network, key) DO UPDATE SET txs = consensus_attr_keys.txs + EXCLUDED.txs, multi_txs = consensus_attr_keys.multi_txs + EXCLUDED.multi_txs`,
      [network, keys.map(([k]) => k), keys.map(([, c]) => sign * c.txs), keys.map(([, c]) => sign * c.multi)],
    );
    const values = [...this.values].sort(byId).map(([, v]) => v);
    await client.query(
      `INSERT INTO consensus_attr_values (network, key, value, num, time, txs)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::numeric[], $5::timestamptz[], $6::bigint[])
       ON CONFLICT (network, key, value) DO UPDATE SET txs = consensus_attr_values.txs + EXCLUDED.txs`,
      [network, values.map((v) => v.key), values.map((v) => v.value), values.map((v) => v.num), values.map((v) => v.time), values.map((v) => sign * v.txs)],
    );
    if (sign > 0) return;
    // Under the row locks the updates took: an ingestion counting one of these again waits, then inserts it anew.
    await client.query(
      `DELETE FROM consensus_attr_values v USING unnest($2::text[], $3::text[]) AS g(key, value)
       WHERE v.network = $1 AND v.key = g.key AND v.value = g.value AND v.txs <= 0`,
      [network, values.map((v) => v.key), values.map((v) => v.value)],
    );
    await client.query("DELETE FROM consensus_attr_keys WHERE network = $1 AND key = ANY($2::text[]) AND txs <= 0", [network, keys.map(([k]) => k)]);
  }
}

/**
 * Stores blocks with their transactions and event attributes in one transaction, so a block is
 * either fully queryable or absent. Blocks already stored are skipped (idempotent re-ingestion).
 *
 * `after`: a bulk loader storing consecutive batches at once passes the previous batch's
 * insertBlocks; the rows are copied meanwhile, but the shared counters are updated and the
 * transaction committed only once that batch has committed (and rolled back if it failed), so
 * batches become visible in order and the chain never has a gap.
 *
 * `term`: the index writer's (its leader lock's): nothing is stored once another writer took over
 * (LeadershipLostError). Skipping stored heights alone let a writer that woke up after a takeover
 * store its own blocks after the other's: a fork.
 */
export async function insertBlocks(network: string, blocks: IngestBlock[], opts: { after?: Promise<unknown>; term?: LeaderTerm } = {}): Promise<void> {
  if (blocks.length === 0) return;
  await rawTransaction(async (client) => {
    await checkTerm(client, opts.term);
    const existing = await client.query<{ height: string }>("SELECT height FROM consensus_blocks WHERE network = $1 AND height = ANY($2::bigint[])", [
      network,
      blocks.map((b) => b.height.toString()),
    ]);
    const skip = new Set(existing.rows.map((r) => BigInt(r.height)));
    const net = copyText(network);
    const blockLines = new CopyLines();
    const txLines = new CopyLines();
    const txAttrLines = new CopyLines();
    const blockAttrLines = new CopyLines();
    const stats = new AttrStats();
    for (const b of blocks) {
      if (skip.has(b.height)) continue;
      const header = b.result.block.header;
      const at = `${net}\t${b.height}\t`;
      const native = nativeOf(b);
      blockLines.add(
        `${at}${copyText(b.result.block_id.hash)}\t${copyText(header.time)}\t${b.txs.length}\t${copyText(JSON.stringify(b.result))}\t${copyText(JSON.stringify(native.block))}\t${copyText(JSON.stringify(native.results))}\n`,
      );
      b.txs.forEach((tx, index) => {
        txLines.add(`${at}${index}\t${copyText(tx.hash)}\t${copyBytes(tx.raw)}\t${copyText(JSON.stringify(tx.result))}\t${copyText(JSON.stringify(native.execs[index] ?? null))}\n`);
        const attrs = new Map<string, Set<string>>();
        tx.result.tags.forEach((tag, ord) => {
          const attr = tag.index ? indexed(tag.key, tag.value) : null;
          if (!attr) return;
          const [num, time] = attrColumns(attr.value);
          txAttrLines.add(`${at}${index}\t${ord}\t${copyText(attr.key)}\t${copyText(attr.value)}\t${copyPlain(num)}\t${copyPlain(time)}\n`);
          const values = attrs.get(attr.key);
          if (values) values.add(attr.value);
          else attrs.set(attr.key, new Set([attr.value]));
        });
        stats.addTx(attrs);
      });
      b.blockAttrs.forEach((a, ord) => {
        const attr = indexed(a.key, a.value);
        if (!attr) return;
        const [num, time] = attrColumns(attr.value);
        blockAttrLines.add(`${at}${ord}\t${copyText(attr.key)}\t${copyText(attr.value)}\t${copyPlain(num)}\t${copyPlain(time)}\n`);
      });
    }
    await copyInto(client, "consensus_blocks", "network, height, hash, time, num_txs, body, native, results", blockLines);
    await copyInto(client, "consensus_txs", "network, height, tx_index, hash, raw, result, exec_result", txLines);
    await copyInto(client, "consensus_tx_attrs", "network, height, tx_index, ord, key, value, num, time", txAttrLines);
    await copyInto(client, "consensus_block_attrs", "network, height, ord, key, value, num, time", blockAttrLines);
    // Never touch the counters' rows before the previous batch commits: it may be waiting for them.
    if (opts.after) await opts.after;
    await stats.save(client, network);
    const stored = blocks.filter((b) => !skip.has(b.height)).map((b) => b.height);
    if (stored.length > 0) {
      const [first, last] = stored.reduce<[bigint, bigint]>(([lo, hi], h) => [h < lo ? h : lo, h > hi ? h : hi], [stored[0]!, stored[0]!]);
      await client.query("SELECT pg_notify($1, $2)", [BLOCKS_STORED_CHANNEL, `${network}\t${first}\t${last}`]);
    }
  });
}

/**
 * What the index holds beside its rows (a worker cursor of the index writer's kind): the time of
 * the chain's first block once that block is pruned, which a devnet's genesis document gives.
 */
const indexCursor = (network: string) => workerCursor(INDEX_WRITER_KIND, network, z.object({ genesisTime: z.string() }));

/**
 * Removes the network's oldest blocks below `below`, at most `maxBlocks` of them, with their
 * transactions and attributes, in one transaction: a block is readable whole or gone, and the
 * lowest one left is what status and resolveHeight report as the earliest. The one-condition
 * counts lose what the removed transactions added (AttrStats, in the order ingestion locks the
 * counters), so a total_count stays the number of transactions a search finds. The time of block 1
 * is kept as the genesis time. As the retention worker of `term`, when given. Answers how many
 * blocks and rows went.
 */
export async function pruneConsensusIndex(network: string, below: bigint, opts: { maxBlocks?: number; term?: LeaderTerm } = {}): Promise<{ blocks: number; rows: number }> {
  return rawTransaction(async (client) => {
    await checkTerm(client, opts.term);
    // The blocks first: their row locks keep a concurrent deleteNetworkIndex from counting them off too.
    const gone = await client.query<{ height: string; genesis_time: string | null }>(
      `DELETE FROM consensus_blocks WHERE network = $1 AND height IN (SELECT height FROM consensus_blocks WHERE network = $1 AND height < $2 ORDER BY height LIMIT $3)
       RETURNING height, CASE WHEN height = 1 THEN body->'block'->'header'->>'time' END AS genesis_time`,
      [network, below.toString(), opts.maxBlocks ?? 2 ** 31 - 1],
    );
    if (gone.rows.length === 0) return { blocks: 0, rows: 0 };
    const heights = gone.rows.map((r) => BigInt(r.height));
    const [lo, hi] = heights.reduce<[bigint, bigint]>(([a, b], h) => [h < a ? h : a, h > b ? h : b], [heights[0]!, heights[0]!]);
    const range = [network, lo.toString(), hi.toString()];
    // The attribute tables lead with their key: a height range is read key by key (any PostgreSQL, no skip scan needed).
    const attrs = await client.query<{ height: string; tx_index: number; key: string; value: string }>(
      `DELETE FROM consensus_tx_attrs WHERE network = $1 AND key = ANY(ARRAY(SELECT key FROM consensus_attr_keys WHERE network = $1)) AND height BETWEEN $2 AND $3
       RETURNING height, tx_index, key, value`,
      range,
    );
    const blockAttrs = await client.query(
      `WITH RECURSIVE k(key) AS (
         (SELECT key FROM consensus_block_attrs WHERE network = $1 ORDER BY key LIMIT 1)
         UNION ALL
         SELECT (SELECT b.key FROM consensus_block_attrs b WHERE b.network = $1 AND b.key > k.key ORDER BY b.key LIMIT 1) FROM k WHERE k.key IS NOT NULL)
       DELETE FROM consensus_block_attrs WHERE network = $1 AND key = ANY(ARRAY(SELECT key FROM k WHERE key IS NOT NULL)) AND height BETWEEN $2 AND $3`,
      range,
    );
    const txs = await client.query("DELETE FROM consensus_txs WHERE network = $1 AND height BETWEEN $2 AND $3", range);
    const byTx = new Map<string, Map<string, Set<string>>>();
    for (const a of attrs.rows) {
      const id = `${a.height}/${a.tx_index}`;
      const tx = byTx.get(id) ?? new Map<string, Set<string>>();
      byTx.set(id, tx);
      const values = tx.get(a.key);
      if (values) values.add(a.value);
      else tx.set(a.key, new Set([a.value]));
    }
    const stats = new AttrStats();
    for (const tx of byTx.values()) stats.addTx(tx);
    await stats.save(client, network, -1);
    const genesisTime = gone.rows.find((r) => r.genesis_time !== null)?.genesis_time;
    if (genesisTime) await indexCursor(network).write(client, { genesisTime });
    return { blocks: gone.rows.length, rows: gone.rows.length + attrs.rows.length + (blockAttrs.rowCount ?? 0) + (txs.rowCount ?? 0) };
  });
}

/** The chain's genesis time: its first block's, kept when the block was pruned; null when nothing is stored. */
export async function genesisTime(network: string): Promise<string | null> {
  const kept = await indexCursor(network).read();
  if (kept) return kept.genesisTime;
  const first = await publicDb().consensusBlock.findFirst({ where: { network }, orderBy: { height: "asc" }, select: { body: true } });
  return (first?.body as unknown as BlockResult | undefined)?.block.header.time ?? null;
}

/** Removes a network's index: its blocks, txs, attributes, counters and cursor (as the index writer of `term`, when given). */
export async function deleteNetworkIndex(network: string, term?: LeaderTerm): Promise<void> {
  const tables = ["consensus_tx_attrs", "consensus_block_attrs", "consensus_attr_keys", "consensus_attr_values", "consensus_txs", "consensus_blocks"];
  await rawTransaction(async (client) => {
    await checkTerm(client, term);
    for (const table of tables) await client.query(`DELETE FROM ${table} WHERE network = $1`, [network]);
    await client.query("DELETE FROM worker_cursors WHERE kind = $1 AND key = $2", [INDEX_WRITER_KIND, network]);
  });
}

export interface ChainHead {
  latest: { height: bigint; hash: string; time: Date; body: BlockResult };
  earliest: { height: bigint; hash: string; time: Date; body: BlockResult };
}

/** Latest and earliest stored blocks, or null when the chain has none yet. */
export async function chainHead(network: string): Promise<ChainHead | null> {
  const select = { height: true, hash: true, time: true, body: true } as const;
  const [latest, earliest] = await Promise.all([
    publicDb().consensusBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select }),
    publicDb().consensusBlock.findFirst({ where: { network }, orderBy: { height: "asc" }, select }),
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
  const row = await publicDb().consensusBlock.findUnique({ where: { network_height: { network, height } }, select: { body: true } });
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
  const row = await publicDb().consensusTx.findFirst({ where: { network, hash }, orderBy: { height: "desc" } });
  return row ? { height: row.height, index: row.txIndex, hash: row.hash, raw: row.raw, result: row.result as unknown as TxResult } : null;
}

/** Raw transactions of each given block, in order (for proofs): one query however many blocks. */
export async function blocksTxs(network: string, heights: readonly bigint[]): Promise<Map<bigint, Uint8Array[]>> {
  const byHeight = new Map<bigint, Uint8Array[]>();
  if (heights.length === 0) return byHeight;
  const rows = await publicDb().consensusTx.findMany({
    where: { network, height: { in: [...new Set(heights)] } },
    orderBy: [{ height: "asc" }, { txIndex: "asc" }],
    select: { height: true, raw: true },
  });
  for (const r of rows) {
    const txs = byHeight.get(r.height);
    if (txs) txs.push(r.raw);
    else byHeight.set(r.height, [r.raw]);
  }
  return byHeight;
}

// ---------------------------------------------------------------------------------------------
// The native interface's reads (CometBFT's own JSON, native.ts). Rows stored before the native
// columns existed have them null: their native JSON is derived from the /rpc shapes.

/** The lowest and highest stored heights; null when nothing is stored. */
export async function storedRange(network: string): Promise<{ earliest: bigint; latest: bigint } | null> {
  const [row] = await publicDb().$queryRawUnsafe<Array<{ earliest: bigint | null; latest: bigint | null }>>(
    "SELECT (SELECT height FROM consensus_blocks WHERE network = $1 ORDER BY height ASC LIMIT 1) AS earliest, (SELECT height FROM consensus_blocks WHERE network = $1 ORDER BY height DESC LIMIT 1) AS latest",
    network,
  );
  return row?.earliest != null && row.latest != null ? { earliest: row.earliest, latest: row.latest } : null;
}

/** A block's /block result as JSON text, by height or by hash; null when not stored. */
export async function nativeBlock(network: string, at: { height: bigint } | { hash: string }): Promise<{ height: bigint; text: string } | null> {
  const where = "height" in at ? "height = $2" : "hash = $2";
  const [row] = await publicDb().$queryRawUnsafe<Array<{ height: bigint; native: string | null; body: string }>>(
    `SELECT height, native::text AS native, CASE WHEN native IS NULL THEN body::text END AS body FROM consensus_blocks WHERE network = $1 AND ${where} ORDER BY height DESC LIMIT 1`,
    network,
    "height" in at ? at.height : at.hash,
  );
  if (!row) return null;
  return { height: row.height, text: row.native ?? JSON.stringify(nativeBlockOf(JSON.parse(row.body) as BlockResult)) };
}

/** The /block results of several heights (those stored), as RawJson by height. */
export async function nativeBlocks(network: string, heights: readonly bigint[]): Promise<Map<bigint, RawJson>> {
  const rows = await publicDb().$queryRawUnsafe<Array<{ height: bigint; native: string | null; body: string | null }>>(
    "SELECT height, native::text AS native, CASE WHEN native IS NULL THEN body::text END AS body FROM consensus_blocks WHERE network = $1 AND height = ANY($2::bigint[])",
    network,
    heights.map(String),
  );
  return new Map(rows.map((r) => [r.height, new RawJson(r.native ?? JSON.stringify(nativeBlockOf(JSON.parse(r.body!) as BlockResult)))]));
}

/**
 * The ExecTxResults of txs given by (height, index), as RawJson keyed `height/index`. `ours`: the
 * rows are a devnet's (native.ts nativeIsOurs), written as a node writes them whatever version
 * stored them; otherwise they are the node's, as it sent them.
 */
export async function nativeExecResults(network: string, txs: ReadonlyArray<{ height: bigint; index: number }>, ours: boolean): Promise<Map<string, RawJson>> {
  if (txs.length === 0) return new Map();
  const rows = await publicDb().$queryRawUnsafe<Array<{ height: bigint; tx_index: number; exec: string | null; result: TxResult | null }>>(
    `SELECT t.height, t.tx_index, t.exec_result::text AS exec, CASE WHEN t.exec_result IS NULL THEN t.result END AS result
     FROM consensus_txs t JOIN unnest($2::bigint[], $3::int[]) AS k(height, tx_index) ON t.height = k.height AND t.tx_index = k.tx_index
     WHERE t.network = $1`,
    network,
    txs.map((t) => t.height.toString()),
    txs.map((t) => t.index),
  );
  const text = (r: (typeof rows)[number]) => {
    if (r.exec === null) return JSON.stringify(execResultOf(r.result!));
    return ours ? JSON.stringify(execResultJson(JSON.parse(r.exec) as StoredExecResult)) : r.exec;
  };
  return new Map(rows.map((r) => [`${r.height}/${r.tx_index}`, new RawJson(text(r))]));
}

/** A block's /block_results result as JSON text; null when the block is not stored. `ours` as for nativeExecResults. */
export async function nativeBlockResults(network: string, height: bigint, ours: boolean): Promise<string | null> {
  const [row] = await publicDb().$queryRawUnsafe<Array<{ results: string | null }>>(
    "SELECT results::text AS results FROM consensus_blocks WHERE network = $1 AND height = $2",
    network,
    height,
  );
  if (!row) return null;
  if (row.results !== null) return ours ? JSON.stringify(blockResultsJson(JSON.parse(row.results) as StoredBlockResults)) : row.results;
  // Derived: the txs' results, the block's indexed events, and the state after it (the next header's app_hash).
  const [txs, attrs, next] = await Promise.all([
    publicDb().consensusTx.findMany({ where: { network, height }, orderBy: { txIndex: "asc" }, select: { result: true } }),
    publicDb().consensusBlockAttr.findMany({ where: { network, height }, orderBy: { ord: "asc" }, select: { key: true, value: true } }),
    getBlock(network, height + 1n),
  ]);
  const execs = txs.map((t) => execResultOf(t.result as unknown as TxResult));
  return JSON.stringify(nativeResultsOf(height, execs, attrs, next?.block.header.app_hash ?? ""));
}

export type { IngestAttr };
