import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { networkBySlug, networks, type Network } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { checkLightBlock, fetchLightBlock, headerHash, validatorsHash, voteSignBytes, verifyEd25519 } from "@/lib/testing/light-client";
import { captureLogs } from "@/lib/testing/logs";
import { generateBlocks } from "../devnet/producer";
import { storedRange } from "../store";
import { deleteNetworkIndex, startUpstreamFollower, type FollowerHandle } from "../upstream/follower";
import { CometStandIn } from "../upstream/stand-in";

/**
 * A relayer's loop over the public path-key URL: header, commit and every page of validators at a
 * height, checked with nothing but what the API answered (lib/testing/light-client.ts encodes
 * CometBFT's messages with protobufjs from its .proto definitions).
 */

const DEVNET_BLOCKS = 12;
const NODE_BLOCKS = 30;
let gw: TestGateway;
let key: string;
let node: CometStandIn;
let follower: FollowerHandle;
const { logger } = captureLogs();

/** Networks of this suite alone (the catalog's are shared with other suites' blocks). */
const devnet: Network = { ...networkBySlug("babylon-testnet")!, slug: `light-devnet-${randomBytes(3).toString("hex")}` };
let upstream: Network;

beforeAll(async () => {
  node = await CometStandIn.start({ chainId: "bbn-1", blocks: NODE_BLOCKS });
  const mainnet = networkBySlug("babylon-mainnet")!;
  upstream = { ...mainnet, slug: `light-upstream-${randomBytes(3).toString("hex")}`, source: { kind: "upstream", urls: [node.url] }, activeChainId: mainnet.chainId };
  (globalThis as { __blockgateCatalog?: readonly Network[] }).__blockgateCatalog = [...networks(), devnet, upstream];
  gw = await startTestGateway();
  ({ apiKey: key } = await createTestProject("Light client", "ENTERPRISE"));
  await generateBlocks(devnet, DEVNET_BLOCKS, 2);
  follower = startUpstreamFollower(upstream, { databaseUrl: process.env.DATABASE_URL!, logger, startHeight: 1n });
  const until = Date.now() + 60_000;
  while ((await storedRange(upstream.slug))?.latest !== BigInt(NODE_BLOCKS)) {
    if (Date.now() > until) throw new Error("the follower did not catch up with the stand-in");
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  await follower?.stop();
  await gw?.stop();
  await node?.stop();
  await deleteNetworkIndex(devnet.slug);
  if (upstream) await deleteNetworkIndex(upstream.slug);
});

const baseOf = (net: Network) => `${gw.url}/cometbft/${net.slug}/${key}`;

describe.each([
  { name: "the devnet", net: () => devnet, chainId: String(devnet.devnetChainId), heights: [1, 2, 7, DEVNET_BLOCKS - 1, DEVNET_BLOCKS], pages: 2 },
  // The latest height's commit is the node's (forwarded); the node answers one page.
  { name: "an upstream network", net: () => upstream, chainId: "bbn-1", heights: [1, 2, 15, NODE_BLOCKS - 1, NODE_BLOCKS], pages: 1 },
])("a relayer's light-client checks through /cometbft on $name", ({ net, chainId, heights, pages }) => {
  it("verifies header hash, validators hash and every commit signature (> 2/3 of the power) at several heights", async () => {
    for (const h of heights) {
      const { header, signedHeader, validators, pages: fetched } = await fetchLightBlock(baseOf(net()), h);
      expect(fetched, `height ${h}`).toBe(pages);
      expect(signedHeader.header).toEqual(header);
      expect(header.chain_id).toBe(chainId);
      expect(validators).toHaveLength(4);
      const check = checkLightBlock(header, signedHeader.commit, validators, chainId);
      expect(check, `height ${h}`).toEqual({ headerHashMatches: true, validatorsHashMatches: true, signatures: [true, true, true, true], signedPower: 40n, totalPower: 40n, trusted: true });
      // The chain links: the next header names this block and its validators.
      if (h < heights.at(-1)!) {
        const next = await fetchLightBlock(baseOf(net()), h + 1);
        expect(next.header.last_block_id).toEqual(signedHeader.commit.block_id);
        expect(next.header.validators_hash).toBe(header.next_validators_hash);
      }
    }
  });

  it("refuses a tampered signature, another chain id, a changed header or validator set, and 2/4 of the power", async () => {
    const h = heights[2]!;
    const { header, signedHeader, validators } = await fetchLightBlock(baseOf(net()), h);
    const commit = signedHeader.commit;
    const sig = Buffer.from(commit.signatures[1]!.signature!, "base64");
    sig[5]! ^= 0x01;
    const tampered = { ...commit, signatures: commit.signatures.map((s, i) => (i === 1 ? { ...s, signature: sig.toString("base64") } : s)) };
    expect(checkLightBlock(header, tampered, validators, chainId)).toMatchObject({ signatures: [true, false, true, true], trusted: false });

    expect(checkLightBlock(header, commit, validators, `${chainId}-other`)).toMatchObject({ signatures: [false, false, false, false], signedPower: 0n, trusted: false });
    expect(checkLightBlock({ ...header, app_hash: "00".repeat(32) }, commit, validators, chainId)).toMatchObject({ headerHashMatches: false, trusted: false });
    expect(checkLightBlock(header, commit, validators.map((v, i) => (i === 0 ? { ...v, voting_power: "11" } : v)), chainId)).toMatchObject({ validatorsHashMatches: false, trusted: false });
    const absent = { block_id_flag: 1, validator_address: "", timestamp: "0001-01-01T00:00:00Z", signature: null };
    const half = { ...commit, signatures: commit.signatures.map((s, i) => (i < 2 ? absent : s)) };
    expect(checkLightBlock(header, half, validators, chainId)).toMatchObject({ signatures: [null, null, true, true], signedPower: 20n, trusted: false });

    // The signature covers the vote's time to the nanosecond and its height.
    const s = commit.signatures[0]!;
    const pub = validators[0]!.pub_key.value;
    const vote = { height: commit.height, round: commit.round, blockId: commit.block_id, timestamp: s.timestamp, chainId };
    expect(verifyEd25519(pub, voteSignBytes(vote), s.signature!)).toBe(true);
    expect(verifyEd25519(pub, voteSignBytes({ ...vote, height: String(h + 1) }), s.signature!)).toBe(false);
    expect(verifyEd25519(pub, voteSignBytes({ ...vote, blockId: null }), s.signature!)).toBe(false);
    expect(headerHash(header)).toBe(commit.block_id.hash);
    expect(validatorsHash([...validators].reverse())).not.toBe(header.validators_hash);
  });
});
