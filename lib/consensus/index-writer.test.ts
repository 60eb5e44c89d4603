import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { buildCatalog, type Network } from "@/lib/networks";
import { connectTestDatabase } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { LeaderLock, LeadershipLostError } from "@/lib/workers/leader-lock";
import { buildBlock, devnetChain, type PreviousBlock } from "./devnet/chain";
import { startDevnetProducer } from "./devnet/producer";
import { chainHead, deleteNetworkIndex, INDEX_WRITER_KIND, insertBlocks, latestHeight } from "./store";
import { startUpstreamFollower } from "./upstream/follower";
import { CometStandIn } from "./upstream/stand-in";

// A network of its own: the other suites write the indexes of the catalog's networks.
const base = buildCatalog({}).find((n) => n.slug === "babylon-testnet")!;
const slug = `test-writer-${randomBytes(4).toString("hex")}`;
const fencedSlug = `test-fenced-${randomBytes(4).toString("hex")}`;
const NODE_BLOCKS = 30;
let databaseUrl: string;
let node: CometStandIn;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
  node = await CometStandIn.start({ chainId: String(base.chainId), blocks: NODE_BLOCKS });
});
afterAll(async () => {
  await node?.stop();
  await deleteNetworkIndex(slug);
  await deleteNetworkIndex(fencedSlug);
  await disconnectDb();
});

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

it("has one writer per network whatever its source: the follower waits for the devnet producer, then takes over", async () => {
  const devnet: Network = { ...base, slug };
  const upstream: Network = { ...devnet, source: { kind: "upstream", urls: [node.url] }, activeChainId: base.chainId };
  const produced = captureLogs();
  const followed = captureLogs();
  const producer = startDevnetProducer(devnet, { databaseUrl, blockTimeMs: 20, logger: produced.logger });
  await waitFor("the producer to write blocks", async () => ((await latestHeight(slug)) ?? 0n) >= 3n);
  const follower = startUpstreamFollower(upstream, { databaseUrl, pollMs: 50, logger: followed.logger });
  try {
    await waitFor("the follower to wait", () => followed.messages.length > 0);
    expect(followed.messages).toEqual([`another worker holds the lock blockgate:consensus-index:${slug}; waiting to take over`]);
    const before = (await latestHeight(slug)) ?? 0n;
    await waitFor("the producer to go on", async () => ((await latestHeight(slug)) ?? 0n) >= before + 3n);
    expect((await chainHead(slug))!.latest.body.block.header.chain_id).toBe(base.devnetChainId);
    expect(node.requests).toBe(0);

    expect(produced.messages).toEqual([`producing devnet blocks from height 1 (chain id ${base.devnetChainId})`]);
    await producer.stop();
    await waitFor("the follower to catch up", async () => (await latestHeight(slug)) === node.latestHeight);
    expect((await chainHead(slug))!.latest.body.block.header.chain_id).toBe(base.chainId);
    expect(followed.messages.slice(1, 4)).toEqual([
      `took over the lock blockgate:consensus-index:${slug}`,
      `removing the devnet blocks (chain ${base.devnetChainId}) stored before the upstream was configured`,
      `following ${node.url} from height 1 (node at ${NODE_BLOCKS})`,
    ]);
  } finally {
    await producer.stop();
    await follower.stop();
  }
}, 60_000);

it("refuses the writes of a devnet producer that lost its lock while stopped: the index stays one chain", async () => {
  const network: Network = { ...base, slug: fencedSlug };
  const chain = devnetChain(fencedSlug, String(base.devnetChainId));
  // The first producer, driven by hand: it leads, stores blocks 1..3, and stops (its session ends, as idle_session_timeout does).
  const old = new LeaderLock(databaseUrl, INDEX_WRITER_KIND, fencedSlug, () => undefined);
  expect(await old.tryAcquire()).toBe(true);
  const term = old.term!;
  let prev: PreviousBlock | null = null;
  const next = () => {
    const built = buildBlock(chain, prev, new Date(Math.max(Date.now(), prev ? prev.time.getTime() + 1 : 0)), 2);
    prev = built.next;
    return built.block;
  };
  for (let i = 0; i < 3; i++) await insertBlocks(fencedSlug, [next()], { term });
  await db().$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${`blockgate worker ${INDEX_WRITER_KIND}:${fencedSlug}`}`;
  await waitFor("the old producer's lock to be gone", () => old.lost);

  const producer = startDevnetProducer(network, { databaseUrl, blockTimeMs: 20, logger: captureLogs().logger });
  await waitFor("the new producer to go on from block 3", async () => ((await latestHeight(fencedSlug)) ?? 0n) >= 6n);
  await producer.stop();
  const head = await latestHeight(fencedSlug);

  // The old producer wakes up and goes on with its own chain: every write refused, nothing stored.
  for (let i = 0; i < 8; i++) await expect(insertBlocks(fencedSlug, [next()], { term })).rejects.toBeInstanceOf(LeadershipLostError);
  await old.release();
  expect(await latestHeight(fencedSlug)).toBe(head);
  const blocks = await db().$queryRaw<Array<{ height: bigint; hash: string; parent: string }>>`
    SELECT height, hash, body->'block'->'header'->'last_block_id'->>'hash' AS parent FROM consensus_blocks WHERE network = ${fencedSlug} ORDER BY height`;
  expect(blocks.map((b) => b.height)).toEqual(Array.from({ length: Number(head) }, (_, i) => BigInt(i + 1)));
  const unlinked = blocks.slice(1).filter((b, i) => b.parent !== blocks[i]!.hash);
  expect(unlinked).toEqual([]);
}, 60_000);
