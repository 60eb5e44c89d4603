import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { disconnectDb } from "@/lib/db/client";
import { buildCatalog, type Network } from "@/lib/networks";
import { connectTestDatabase } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { startDevnetProducer } from "./devnet/producer";
import { chainHead, latestHeight } from "./store";
import { deleteNetworkIndex, startUpstreamFollower } from "./upstream/follower";
import { CometStandIn } from "./upstream/stand-in";

// A network of its own: the other suites write the indexes of the catalog's networks.
const base = buildCatalog({}).find((n) => n.slug === "babylon-testnet")!;
const slug = `test-writer-${randomBytes(4).toString("hex")}`;
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
