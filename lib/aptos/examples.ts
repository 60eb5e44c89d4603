/**
 * Example values from an Aptos network's index, so that the console playground's Aptos tab starts
 * with requests that find something: the head, and a recent user transaction with its sender.
 */
import { db } from "@/lib/db/client";
import { aptosHead } from "./store";

export interface AptosExamples {
  /** Height of the latest stored block (a u64 as a decimal string); null before the first block. */
  blockHeight: string | null;
  /** The ledger version at the head. */
  ledgerVersion: string | null;
  /** A recent user transaction, else the latest transaction; null before the first block. */
  transaction: { version: string; hash: string; sender: string | null } | null;
}

/** How far back from the head a user transaction is looked for: bounds the scan on a long chain. */
const RECENT_VERSIONS = 10_000n;

const EMPTY: AptosExamples = { blockHeight: null, ledgerVersion: null, transaction: null };

/** Examples for `network` (an Aptos network's slug); every field null while its index is empty. */
export async function aptosExamples(network: string): Promise<AptosExamples> {
  const head = await aptosHead(network);
  if (!head) return EMPTY;
  const last = head.latest.lastVersion;
  const select = { version: true, hash: true, sender: true } as const;
  const tx =
    (await db().aptosTransaction.findFirst({
      where: { network, type: "user_transaction", version: { gt: last - RECENT_VERSIONS, lte: last } },
      orderBy: { version: "desc" },
      select,
    })) ?? (await db().aptosTransaction.findFirst({ where: { network, version: { lte: last } }, orderBy: { version: "desc" }, select }));
  return {
    blockHeight: head.latest.height.toString(),
    ledgerVersion: last.toString(),
    transaction: tx ? { version: tx.version.toString(), hash: tx.hash, sender: tx.sender } : null,
  };
}
