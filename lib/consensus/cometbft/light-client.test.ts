import { createHash, randomBytes } from "node:crypto";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { networkBySlug, type Network } from "@/lib/networks";
import { addTestNetworks, createTestProject, startTestGateway, waitForStoredHeight, type TestGateway } from "@/lib/testing/harness";
import {
  checkLightBlock,
  commitHash,
  fetchLightBlock,
  headerHash,
  merkleRoot,
  resultsHash,
  validatorsHash,
  voteSignBytes,
  verifyEd25519,
  type JsonCommitSig,
  type JsonExecTxResult,
  type JsonHeader,
} from "@/lib/testing/light-client";
import { captureLogs } from "@/lib/testing/logs";
import { generateBlocks } from "../devnet/producer";
import { deleteNetworkIndex } from "../store";
import { startUpstreamFollower, type FollowerHandle } from "../upstream/follower";
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
  addTestNetworks(devnet, upstream);
  gw = await startTestGateway();
  ({ apiKey: key } = await createTestProject("Light client", "ENTERPRISE"));
  await generateBlocks(devnet, DEVNET_BLOCKS, 2);
  follower = startUpstreamFollower(upstream, { databaseUrl: process.env.DATABASE_URL!, logger, startHeight: 1n });
  await waitForStoredHeight(upstream.slug, BigInt(NODE_BLOCKS), "the follower to catch up with the stand-in");
}, 120_000);

afterAll(async () => {
  await follower?.stop();
  await gw?.stop();
  await node?.stop();
  await deleteNetworkIndex(devnet.slug);
  if (upstream) await deleteNetworkIndex(upstream.slug);
});

const baseOf = (net: Network) => `${gw.url}/cometbft/${net.slug}/${key}`;

async function rpc<T>(net: Network, path: string): Promise<T> {
  const res = await fetch(`${baseOf(net)}/${path}`);
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (res.status !== 200 || body.result === undefined) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(body.error)}`);
  return body.result;
}

type NativeBlock = { block: { header: JsonHeader; evidence: { evidence: unknown[] }; last_commit: { signatures: JsonCommitSig[] } } };
type NativeResults = { txs_results: JsonExecTxResult[] | null };
const EMPTY = Buffer.from(merkleRoot([])).toString("hex").toUpperCase();

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

  it("header h+1 commits to block h+1's last_commit signatures and to /block_results of h", async () => {
    const first = await rpc<NativeBlock>(net(), "block?height=1");
    // The first block's last commit is empty (not nil); there are no earlier results.
    expect(first.block.last_commit.signatures).toEqual([]);
    expect(first.block.header.last_commit_hash).toBe(EMPTY);
    expect(first.block.header.last_results_hash).toBe("");
    let withTxs = 0;
    for (const h of heights.slice(0, -1)) {
      const next = await rpc<NativeBlock>(net(), `block?height=${h + 1}`);
      const results = await rpc<NativeResults>(net(), `block_results?height=${h}`);
      const header = next.block.header;
      expect(next.block.last_commit.signatures, `height ${h + 1}`).toHaveLength(4);
      expect(header.last_commit_hash, `height ${h + 1}`).toBe(commitHash(next.block.last_commit.signatures));
      expect(header.last_results_hash, `height ${h + 1}`).toBe(resultsHash(results.txs_results ?? []));
      expect(header.evidence_hash).toBe(EMPTY);
      expect(next.block.evidence.evidence).toEqual([]);
      if ((results.txs_results ?? []).length > 0) withTxs++;
    }
    expect(withTxs).toBeGreaterThan(0);
  });

  it("header's consensus_hash is the hash of /consensus_params' block limits (HashedParams)", async () => {
    const h = heights[2]!;
    const { consensus_params: params } = await rpc<{ consensus_params: { block: { max_bytes: string; max_gas: string } } }>(net(), `consensus_params?height=${h}`);
    const { header } = await fetchLightBlock(baseOf(net()), h);
    // HashedParams { int64 block_max_bytes = 1; int64 block_max_gas = 2; }, SHA-256 of its encoding.
    const hashed = protobuf.Writer.create().uint32(8).int64(Number(params.block.max_bytes)).uint32(16).int64(Number(params.block.max_gas)).finish();
    expect(header.consensus_hash).toBe(createHash("sha256").update(hashed).digest("hex").toUpperCase());
    expect(header.consensus_hash).toBe("048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F");
  });

  it("a tampered last_commit signature or tx result no longer matches the next header", async () => {
    let h = heights[2]!;
    let results = await rpc<NativeResults>(net(), `block_results?height=${h}`);
    while ((results.txs_results ?? []).length === 0) results = await rpc<NativeResults>(net(), `block_results?height=${--h}`);
    const next = await rpc<NativeBlock>(net(), `block?height=${h + 1}`);
    const { last_commit_hash: commit, last_results_hash: lastResults } = next.block.header;
    const sigs = next.block.last_commit.signatures;
    expect(commitHash(sigs)).toBe(commit);
    const sig = Buffer.from(sigs[2]!.signature!, "base64");
    sig[0]! ^= 0x80;
    expect(commitHash(sigs.map((s, i) => (i === 2 ? { ...s, signature: sig.toString("base64") } : s)))).not.toBe(commit);
    expect(commitHash(sigs.map((s, i) => (i === 0 ? { ...s, timestamp: s.timestamp.replace(/Z$/, "1Z") } : s)))).not.toBe(commit);
    expect(commitHash(sigs.slice(1))).not.toBe(commit);

    const txs = results.txs_results!;
    expect(resultsHash(txs)).toBe(lastResults);
    const bump = (r: JsonExecTxResult) => ({ ...r, gas_used: String(Number(r.gas_used ?? "0") + 1) });
    expect(resultsHash(txs.map((r, i) => (i === 0 ? bump(r) : r)))).not.toBe(lastResults);
    expect(resultsHash(txs.map((r, i) => (i === 0 ? { ...r, code: 1 } : r)))).not.toBe(lastResults);
    expect(resultsHash([...txs, txs[0]!])).not.toBe(lastResults);
    // Only the deterministic fields count: the log and events may differ between nodes.
    expect(resultsHash(txs.map((r) => ({ ...r, log: "other", info: "other" })))).toBe(lastResults);
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
