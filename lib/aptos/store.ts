/**
 * The Aptos index in PostgreSQL: blocks, transactions (their JSON exactly as the REST API answers
 * it) and events, per network, written by one worker per network together with its cursor.
 */
import { z } from "zod";
import { db, type Prisma } from "@/lib/db/client";
import { workerCursor, type Transaction } from "@/lib/workers/cursor";
import { checkTerm, type LeaderTerm } from "@/lib/workers/leader-lock";
import type { IngestBlock } from "./types";

/**
 * The background worker kind that writes a network's Aptos index, keyed by the network's slug:
 * the devnet producer and the upstream follower take the same leader lock and share the cursor,
 * so one process writes a network's index whatever its source.
 */
export const APTOS_INDEX_KIND = "aptos-index";

const u64Text = z.string().regex(/^\d{1,20}$/);

/** Where the index stands: the next block and version to store, and whose chain it holds. */
export const aptosCursorSchema = z.object({
  source: z.enum(["devnet", "upstream"]),
  chainId: z.number().int().min(0).max(255),
  nextHeight: u64Text,
  nextVersion: u64Text,
  /** The devnet's own state (balances, sequence numbers, counters); its schema lives in lib/aptos/devnet. */
  devnet: z.record(z.string(), z.json()).optional(),
});
export type AptosCursor = z.infer<typeof aptosCursorSchema>;

export function aptosCursor(network: string) {
  return workerCursor<AptosCursor>(APTOS_INDEX_KIND, network, aptosCursorSchema as z.ZodType<AptosCursor>);
}

const decimalText = (text: string) => (/^\d{1,20}$/.test(text) ? text : "0");

async function writeRows(tx: Transaction, network: string, blocks: IngestBlock[]): Promise<void> {
  await tx.aptosBlock.createMany({
    data: blocks.map((b) => ({
      network,
      height: b.height,
      hash: b.hash,
      firstVersion: b.firstVersion,
      lastVersion: b.lastVersion,
      timestamp: b.timestamp,
      epoch: b.epoch,
      txHashes: b.txs.map((t) => t.hash),
    })),
  });
  const txs = blocks.flatMap((b) => b.txs.map((t) => ({ t, height: b.height })));
  if (txs.length === 0) return;
  await tx.aptosTransaction.createMany({
    data: txs.map(({ t, height }) => ({
      network,
      version: t.version,
      blockHeight: height,
      hash: t.hash,
      type: t.type,
      sender: t.sender,
      sequenceNumber: t.sequenceNumber,
      payloadFunction: t.payloadFunction,
      success: t.success,
      body: t.body as unknown as Prisma.InputJsonValue,
    })),
  });
  const events = txs.flatMap(({ t }) =>
    t.events.map((e, index) => ({
      network,
      version: t.version,
      index,
      type: e.type,
      accountAddress: e.guid.account_address,
      creationNumber: decimalText(e.guid.creation_number),
      sequenceNumber: decimalText(e.sequence_number),
      data: (e.data ?? null) as Prisma.InputJsonValue,
    })),
  );
  // Large pages in slices: one statement's bind parameters are limited to 65,535.
  for (let i = 0; i < events.length; i += 5000) await tx.aptosEvent.createMany({ data: events.slice(i, i + 5000) });
}

/**
 * Stores whole blocks and moves the cursor in one transaction, so a block is either fully
 * readable or absent, and the cursor says exactly what is stored. `expected` is the cursor the
 * writer read: when another writer moved it since, nothing is stored (CursorConflictError). With
 * the writer's `term` (lib/workers/leader-lock.ts), nothing is stored either once another took over
 * the lock; it also lets that one end this transaction if it stays open (its process stopped).
 */
export async function storeAptosBlocks(network: string, blocks: IngestBlock[], cursor: { next: AptosCursor; expected: AptosCursor | null; term?: LeaderTerm }): Promise<void> {
  await db().$transaction(
    async (tx) => {
      await checkTerm(tx, cursor.term);
      if (blocks.length > 0) await writeRows(tx, network, blocks);
      await aptosCursor(network).write(tx, cursor.next, { expected: cursor.expected });
    },
    { timeout: 60_000 },
  );
}

/**
 * Removes the network's oldest blocks below `below`, at most `maxBlocks` of them, with their
 * transactions and events, in one transaction (the oldest block left is what the ledger info
 * reports as the oldest); as the retention worker of `term`, when given. Answers how many blocks
 * and rows went.
 */
export async function pruneAptosIndex(network: string, below: bigint, opts: { maxBlocks?: number; term?: LeaderTerm } = {}): Promise<{ blocks: number; rows: number }> {
  return db().$transaction(
    async (tx) => {
      await checkTerm(tx, opts.term);
      const [gone] = await tx.$queryRaw<Array<{ blocks: number; last: bigint | null }>>`
        WITH d AS (
          DELETE FROM aptos_blocks WHERE network = ${network}
            AND height IN (SELECT height FROM aptos_blocks WHERE network = ${network} AND height < ${below} ORDER BY height LIMIT ${opts.maxBlocks ?? 2 ** 31 - 1})
          RETURNING last_version)
        SELECT count(*)::int AS blocks, max(last_version) AS last FROM d`;
      if (!gone || gone.last === null) return { blocks: 0, rows: 0 };
      const events = await tx.aptosEvent.deleteMany({ where: { network, version: { lte: gone.last } } });
      const txs = await tx.aptosTransaction.deleteMany({ where: { network, version: { lte: gone.last } } });
      return { blocks: gone.blocks, rows: gone.blocks + events.count + txs.count };
    },
    { timeout: 60_000 },
  );
}

/** Removes a network's blocks, transactions, events and cursor (an index of another chain); as the index writer of `term`, when given. */
export async function deleteAptosIndex(network: string, term?: LeaderTerm): Promise<void> {
  await db().$transaction(
    async (tx) => {
      await checkTerm(tx, term);
      await tx.aptosEvent.deleteMany({ where: { network } });
      await tx.aptosTransaction.deleteMany({ where: { network } });
      await tx.aptosBlock.deleteMany({ where: { network } });
      await tx.workerCursor.deleteMany({ where: { kind: APTOS_INDEX_KIND, key: network } });
    },
    { timeout: 600_000 },
  );
}

/** A stored block's header and the hashes of its transactions, in version order. */
export type StoredBlock = Omit<IngestBlock, "txs"> & { txHashes: string[] };

const blockSelect = { height: true, hash: true, firstVersion: true, lastVersion: true, timestamp: true, epoch: true, txHashes: true } as const;

export interface AptosHead {
  latest: StoredBlock;
  earliest: StoredBlock;
}

/** The newest and oldest stored blocks, or null before the first. */
export async function aptosHead(network: string): Promise<AptosHead | null> {
  const [latest, earliest] = await Promise.all([
    db().aptosBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select: blockSelect }),
    db().aptosBlock.findFirst({ where: { network }, orderBy: { height: "asc" }, select: blockSelect }),
  ]);
  return latest && earliest ? { latest, earliest } : null;
}

export async function blockByHeight(network: string, height: bigint): Promise<StoredBlock | null> {
  return db().aptosBlock.findUnique({ where: { network_height: { network, height } }, select: blockSelect });
}

export async function blocksByHeight(network: string, from: bigint, to: bigint): Promise<StoredBlock[]> {
  return db().aptosBlock.findMany({ where: { network, height: { gte: from, lte: to } }, orderBy: { height: "asc" }, select: blockSelect });
}

/** The block holding a version. */
export async function blockByVersion(network: string, version: bigint): Promise<StoredBlock | null> {
  const row = await db().aptosBlock.findFirst({ where: { network, lastVersion: { gte: version } }, orderBy: { lastVersion: "asc" }, select: blockSelect });
  return row && row.firstVersion <= version ? row : null;
}

/** Stored transactions' JSON texts (as stored, never re-encoded), in version order. */
export async function transactionTexts(network: string, from: bigint, to: bigint): Promise<string[]> {
  const rows = await db().$queryRaw<Array<{ body: string }>>`
    SELECT body::text AS body FROM aptos_transactions WHERE network = ${network} AND version BETWEEN ${from} AND ${to} ORDER BY version`;
  return rows.map((r) => r.body);
}

export async function transactionTextByVersion(network: string, version: bigint): Promise<string | null> {
  const rows = await db().$queryRaw<Array<{ body: string }>>`
    SELECT body::text AS body FROM aptos_transactions WHERE network = ${network} AND version = ${version}`;
  return rows[0]?.body ?? null;
}

export async function transactionTextByHash(network: string, hash: string): Promise<string | null> {
  const rows = await db().$queryRaw<Array<{ body: string }>>`
    SELECT body::text AS body FROM aptos_transactions WHERE network = ${network} AND hash = ${hash} ORDER BY version DESC LIMIT 1`;
  return rows[0]?.body ?? null;
}

/** An account's transactions from a sequence number (or its latest `limit` when `start` is null), in sequence order. */
export async function accountTransactionTexts(network: string, sender: string, start: bigint | null, limit: number): Promise<string[]> {
  const rows =
    start === null
      ? await db().$queryRaw<Array<{ body: string }>>`
          SELECT body FROM (
            SELECT body::text AS body, sequence_number FROM aptos_transactions
            WHERE network = ${network} AND sender = ${sender} ORDER BY sequence_number DESC LIMIT ${limit}
          ) latest ORDER BY sequence_number`
      : await db().$queryRaw<Array<{ body: string }>>`
          SELECT body::text AS body FROM aptos_transactions
          WHERE network = ${network} AND sender = ${sender} AND sequence_number >= ${start} ORDER BY sequence_number LIMIT ${limit}`;
  return rows.map((r) => r.body);
}
