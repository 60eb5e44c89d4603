import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcError } from "@/lib/jsonrpc/errors";
import { freePort } from "@/lib/testing/ports";
import { CometClient, UpstreamUnavailableError } from "./client";
import { CometStandIn } from "./stand-in";

let good: CometStandIn;
let bad: CometStandIn;
let silent: Server;
let silentUrl: string;

beforeAll(async () => {
  good = await CometStandIn.start({ chainId: "bbn-1", blocks: 5 });
  bad = await CometStandIn.start({ chainId: "bbn-1", blocks: 5 });
  bad.fail(true);
  // Accepts connections and never answers.
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await good.stop();
  await bad.stop();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

describe("CometBFT client", () => {
  it("reads the real shapes over the URI form", async () => {
    const client = new CometClient([good.url]);
    const status = await client.status();
    expect(status.node_info.network).toBe("bbn-1");
    expect(status.sync_info.latest_block_height).toBe("5");
    const block = await client.block(3n);
    expect(block.block_id.hash).toBe(good.block(3).result.block_id.hash);
    expect((await client.blockResults(3n)).height).toBe("3");
    expect((await client.netInfo()).n_peers).toBe("3");
    expect((await client.consensusParams(2n)).block_height).toBe("2");
  });

  it("passes the node's own errors through as RpcError, without marking the node unhealthy", async () => {
    const client = new CometClient([good.url]);
    const e = await client.block(99n).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(RpcError);
    expect(e).toMatchObject({ code: -32603, message: "Internal error", data: "height 99 must be less than or equal to the current blockchain height 5" });
    expect(client.unhealthy()).toEqual([]);
  });

  it("tries the URLs in order, passes over a failing one for 30 s, then tries it again", async () => {
    let now = 1_000_000;
    const client = new CometClient([bad.url, good.url], { now: () => now });
    const [badBefore, goodBefore] = [bad.requests, good.requests];
    await client.status();
    expect([bad.requests - badBefore, good.requests - goodBefore]).toEqual([1, 1]);
    expect(client.unhealthy()).toEqual([`#1 ${bad.url}`]);
    await client.status();
    await client.block(2n);
    expect([bad.requests - badBefore, good.requests - goodBefore]).toEqual([1, 3]);
    now += 30_001;
    bad.fail(false);
    await client.status();
    expect([bad.requests - badBefore, good.requests - goodBefore]).toEqual([2, 3]);
    expect(client.unhealthy()).toEqual([]);
    bad.fail(true);
  });

  it("says which nodes failed and how, by origin only (a URL's path may hold a provider key)", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const client = new CometClient([`${bad.url}/key-abc123`, `${closed}/key-def456`, `${silentUrl}/key-ghi789`], { timeoutMs: 300 });
    const e = await client.status().catch((err: unknown) => err);
    expect(e).toBeInstanceOf(UpstreamUnavailableError);
    const message = (e as Error).message;
    // The failing stand-in answers 500 or drops the connection, in turn.
    expect(message).toMatch(new RegExp(`#1 ${bad.url}: (HTTP 500, not a JSON-RPC answer|other side closed)`));
    expect(message).toContain(`#2 ${closed}: connect ECONNREFUSED`);
    expect(message).toContain(`#3 ${silentUrl}: timed out`);
    expect(message).not.toMatch(/key-/);
    // Every node is marked; a single node is still tried rather than locked out.
    expect(client.unhealthy()).toHaveLength(3);
    const single = new CometClient([good.url]);
    good.fail(true);
    await expect(single.status()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    good.fail(false);
    await expect(single.status()).resolves.toMatchObject({ node_info: { network: "bbn-1" } });
  });

  it("accepts ws:// URLs of the websocket endpoint and credentials in the URL", async () => {
    const ws = good.url.replace("http://", "ws://user:p%40ss@") + "/websocket";
    const client = new CometClient([ws]);
    expect(client.labels).toEqual([good.url]);
    await expect(client.status()).resolves.toMatchObject({ node_info: { network: "bbn-1" } });
  });

  it("stops at once when aborted, without blaming the node", async () => {
    const client = new CometClient([silentUrl]);
    const abort = new AbortController();
    const pending = client.status(abort.signal);
    setTimeout(() => abort.abort(new Error("stopping")), 50);
    await expect(pending).rejects.toThrow("stopping");
    expect(client.unhealthy()).toEqual([]);
  });
});
