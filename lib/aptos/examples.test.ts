import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { networkBySlug, type Network } from "@/lib/networks";
import { connectTestDatabase } from "@/lib/testing/harness";
import { generateAptosBlocks } from "./devnet/producer";
import { aptosExamples } from "./examples";
import { aptosHead, deleteAptosIndex } from "./store";
import type { TransactionJson } from "./types";

// A network of its own: the other Aptos suites share this run's database.
const SLUG = "aptos-examples";
let network: Network;

beforeAll(async () => {
  await connectTestDatabase();
  network = { ...networkBySlug("aptos-testnet")!, slug: SLUG };
  await deleteAptosIndex(SLUG);
}, 120_000);

afterAll(async () => {
  await deleteAptosIndex(SLUG);
});

describe("aptosExamples", () => {
  it("has no values before the first block", async () => {
    expect(await aptosExamples(SLUG)).toEqual({ blockHeight: null, ledgerVersion: null, transaction: null });
  });

  it("takes the latest transaction while no user transaction is stored", async () => {
    await generateAptosBlocks(network, 3, 0);
    const head = (await aptosHead(SLUG))!;
    const latest = await db().aptosTransaction.findUniqueOrThrow({ where: { network_version: { network: SLUG, version: head.latest.lastVersion } } });
    expect(await aptosExamples(SLUG)).toEqual({
      blockHeight: head.latest.height.toString(),
      ledgerVersion: head.latest.lastVersion.toString(),
      transaction: { version: latest.version.toString(), hash: latest.hash, sender: null },
    });
  });

  it("prefers the latest user transaction, with its sender, as the read API answers it", async () => {
    await generateAptosBlocks(network, 4, 3);
    const head = (await aptosHead(SLUG))!;
    const ex = await aptosExamples(SLUG);
    expect(ex.blockHeight).toBe(head.latest.height.toString());
    expect(ex.ledgerVersion).toBe(head.latest.lastVersion.toString());
    const row = await db().aptosTransaction.findUniqueOrThrow({ where: { network_version: { network: SLUG, version: BigInt(ex.transaction!.version) } } });
    const body = row.body as unknown as TransactionJson & { sender?: string };
    expect(body.type).toBe("user_transaction");
    expect(ex.transaction).toEqual({ version: body.version, hash: body.hash, sender: body.sender });
    // No user transaction after it.
    expect(await db().aptosTransaction.count({ where: { network: SLUG, type: "user_transaction", version: { gt: row.version } } })).toBe(0);
  });
});
