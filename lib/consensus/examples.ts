/**
 * Example parameter values taken from a consensus network's own recent data, so that the console
 * playground's "Use example" buttons fill in requests that find something.
 */
import { db } from "@/lib/db/client";
import { parseQuery } from "./query/parse";

export interface RecentExamples {
  /** Height of the latest stored block; null while the chain has no blocks. */
  latestHeight: number | null;
  /** Hash of a recent transaction (upper-case hex, as /tx answers it). */
  txHash: string | null;
  /** A `transfer.sender` attribute value of that transaction, when a recent one has it. */
  sender: string | null;
  /** A tx_search query that matches that transaction. */
  query: string | null;
}

export const SENDER_KEY = "transfer.sender";

/** How far back from the latest block an example is looked for: bounds the scan on a long chain. */
const RECENT_BLOCKS = 1000n;

const EMPTY: RecentExamples = { latestHeight: null, txHash: null, sender: null, query: null };

/** The query for the example transaction: by sender when it has one that a query can quote, else by height. */
function exampleQuery(sender: string | null, height: bigint): string | null {
  // Query strings have no escapes: a value holding a quote cannot be written as a literal.
  const query = sender !== null && !sender.includes("'") ? `${SENDER_KEY} = '${sender}'` : `tx.height = ${height}`;
  return parseQuery(query).ok ? query : null;
}

/** Examples for `network` (a consensus network's slug); every field null when it has no data yet. */
export async function recentExamples(network: string): Promise<RecentExamples> {
  const latest = await db().consensusBlock.findFirst({ where: { network }, orderBy: { height: "desc" }, select: { height: true } });
  if (!latest) return EMPTY;
  const recent = { network, height: { gt: latest.height - RECENT_BLOCKS } };
  const newest = [{ height: "desc" as const }, { txIndex: "desc" as const }];

  // Prefer a transaction with a sender, so the hash and the query point at the same transaction.
  const attr = await db().consensusTxAttr.findFirst({ where: { ...recent, key: SENDER_KEY }, orderBy: newest, select: { height: true, txIndex: true, value: true } });
  const tx = attr
    ? await db().consensusTx.findUnique({ where: { network_height_txIndex: { network, height: attr.height, txIndex: attr.txIndex } }, select: { hash: true, height: true } })
    : await db().consensusTx.findFirst({ where: recent, orderBy: newest, select: { hash: true, height: true } });

  const sender = tx && attr ? attr.value : null;
  return {
    latestHeight: Number(latest.height),
    txHash: tx?.hash ?? null,
    sender,
    query: tx ? exampleQuery(sender, tx.height) : null,
  };
}
