// The EVM JSON-RPC node endpoint end to end: the gateway in front of real anvil processes (devnets
// through the supervisor, bare anvils as upstreams), called with viem and with raw JSON-RPC.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, http, keccak256, parseAbiItem, parseGwei, type Address, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Contract, FetchRequest, JsonRpcProvider, Wallet } from "ethers";
import { db } from "@/lib/db/client";
import { MAX_BATCH } from "@/lib/jsonrpc/envelope";
import { configureNetworks, networkBySlug } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { BlockgateToken, DEVNET_CONTRACTS } from "./devnet/contracts";
import type { TrafficGenerator } from "./devnet/traffic";
import { EVM_METHODS } from "./methods";
import { rpcDirect, spawnAnvil, startRecordingProxy, startTestDevnets, type BareAnvil, type TestDevnets } from "./testing";

const NET = "ethereum-mainnet";
const BLOCK_TIME_S = 1;
const SUPPLY = BigInt(DEVNET_CONTRACTS.token.totalSupply);
const TransferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

type RpcError = { code: number; message: string; data?: unknown };
type Answer = { jsonrpc: "2.0"; id: unknown; result?: unknown; error?: RpcError };

let gw: TestGateway;
let devnets: TestDevnets;
let traffic: TrafficGenerator;
let enterprise: Awaited<ReturnType<typeof createTestProject>>;
let free: Awaited<ReturnType<typeof createTestProject>>;
/** anvil itself, bypassing the gateway: the reference every answer is compared with. */
let direct: PublicClient;
let directUrl: string;

/** The environment without upstreams: every EVM network on its devnet unless a test says otherwise. */
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("UPSTREAM_")));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const req = (id: unknown, method: string, params?: unknown) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

/** POSTs JSON-RPC to /node/<slug> with the key in the header; returns the JSON-RPC answer(s). */
async function node<T = Answer>(body: unknown, opts: { key?: string; slug?: string } = {}): Promise<T> {
  const r = await post(`/node/${opts.slug ?? NET}`, body, { "X-API-KEY": opts.key ?? enterprise.apiKey });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json as T;
}

async function result<T = unknown>(method: string, params: unknown[] = [], opts: { key?: string; slug?: string } = {}): Promise<T> {
  const a = await node(req(1, method, params), opts);
  expect(a.error, `${method}: ${JSON.stringify(a.error)}`).toBeUndefined();
  return a.result as T;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A fresh account with `wei` on the node at `url` (set straight on anvil), and a signer for it. */
async function fundedAccount(url: string, wei = 10n ** 18n) {
  const account = privateKeyToAccount(generatePrivateKey());
  expect((await rpcDirect(url, "anvil_setBalance", [account.address, `0x${wei.toString(16)}`])).error).toBeUndefined();
  return account;
}

function transferTx(chainId: number, nonce = 0) {
  return { chainId, nonce, to: "0x000000000000000000000000000000000000dEaD" as Address, value: 1000n, gas: 21_000n, maxFeePerGas: parseGwei("100"), maxPriorityFeePerGas: parseGwei("1"), type: "eip1559" as const };
}

beforeAll(async () => {
  configureNetworks(BASE_ENV);
  gw = await startTestGateway();
  devnets = await startTestDevnets({ blockTimeSec: BLOCK_TIME_S, trafficIntervalMs: 400 });
  // Unlimited throughput for everything but the metering test, which uses its own free project.
  enterprise = await createTestProject("EVM", "ENTERPRISE");
  free = await createTestProject("EVM free");
  directUrl = await devnets.nodeUrl(NET);
  direct = createPublicClient({ transport: http(directUrl, { retryCount: 0 }) });
  traffic = await devnets.traffic(NET);
}, 90_000);

afterAll(async () => {
  configureNetworks(process.env);
  await devnets?.stop();
  await gw?.stop();
});

describe("viem against the node endpoint", () => {
  const clients = () => ({
    header: createPublicClient({ transport: http(`${gw.url}/node/${NET}`, { fetchOptions: { headers: { "X-API-KEY": enterprise.apiKey } }, retryCount: 0 }) }),
    path: createPublicClient({ transport: http(`${gw.url}/node/${NET}/${enterprise.apiKey}`, { retryCount: 0 }) }),
  });

  it("reads chain id, blocks, balances and contract state in header and path form", async () => {
    const network = networkBySlug(NET)!;
    expect(network.source.kind).toBe("devnet");
    for (const [form, client] of Object.entries(clients())) {
      const chainId = await client.getChainId();
      expect(chainId, form).toBe(network.devnetChainId);
      expect(chainId, form).not.toBe(network.chainId); // never the real chain's id

      const height = await client.getBlockNumber({ cacheTime: 0 });
      expect(height, form).toBeGreaterThan(0n);
      const block = await client.getBlock({ blockNumber: height });
      expect(block, form).toEqual(await direct.getBlock({ blockNumber: height }));
      expect(block.number, form).toBe(height);

      const holder = traffic.holders[1]!;
      const balance = await client.getBalance({ address: holder, blockNumber: height });
      expect(balance, form).toBeGreaterThan(0n);
      expect(balance, form).toBe(await direct.getBalance({ address: holder, blockNumber: height }));

      const read = (c: PublicClient, functionName: "totalSupply" | "balanceOf") =>
        functionName === "totalSupply"
          ? c.readContract({ address: traffic.token, abi: BlockgateToken.abi, functionName, blockNumber: height })
          : c.readContract({ address: traffic.token, abi: BlockgateToken.abi, functionName, args: [holder], blockNumber: height });
      expect(await read(client as PublicClient, "totalSupply"), form).toBe(SUPPLY);
      const tokens = await read(client as PublicClient, "balanceOf");
      expect(tokens, form).toBeGreaterThan(0n);
      expect(tokens, form).toBe(await read(direct, "balanceOf"));
    }
  });

  it("returns the token's Transfer logs once the traffic generator made some", async () => {
    const { header, path } = clients();
    // The mint and one grant per holder come first; wait for transfers the traffic loop sends.
    const initial = 1 + traffic.holders.length - 1;
    const logs = await waitFor("transfers between holders", async () => {
      const l = await header.getLogs({ address: traffic.token, event: TransferEvent, fromBlock: 0n, toBlock: "latest" });
      return l.length > initial + 2 && l;
    });
    const last = logs.at(-1)!.blockNumber;
    const range = { address: traffic.token, event: TransferEvent, fromBlock: 0n, toBlock: last } as const;
    const expected = await direct.getLogs(range);
    expect(await header.getLogs(range)).toEqual(expected);
    expect(await path.getLogs(range)).toEqual(expected);
    expect(expected[0]!.args).toEqual({ from: "0x0000000000000000000000000000000000000000", to: traffic.holders[0], value: SUPPLY });
    for (const log of expected.slice(initial)) {
      expect(traffic.holders).toContain(log.args.from);
      expect(traffic.holders).toContain(log.args.to);
      expect(log.args.value).toBeGreaterThan(0n);
    }
  });

  it("answers a batch transport's calls, sent as one JSON-RPC batch", async () => {
    for (const [form, url, headers] of [
      ["header", `${gw.url}/node/${NET}`, { "X-API-KEY": enterprise.apiKey }],
      ["path", `${gw.url}/node/${NET}/${enterprise.apiKey}`, {}],
    ] as const) {
      const bodies: unknown[] = [];
      const client = createPublicClient({
        transport: http(url, { batch: true, retryCount: 0, fetchOptions: { headers }, onFetchRequest: (_r, init) => void bodies.push(JSON.parse(String(init.body))) }),
      });
      const holder = traffic.holders[2]!;
      const height = await direct.getBlockNumber({ cacheTime: 0 });
      bodies.length = 0;
      const [chainId, blockNumber, balance, supply, block, nonce] = await Promise.all([
        client.getChainId(),
        client.getBlockNumber({ cacheTime: 0 }),
        client.getBalance({ address: holder, blockNumber: height }),
        client.readContract({ address: traffic.token, abi: BlockgateToken.abi, functionName: "totalSupply" }),
        client.getBlock({ blockNumber: height }),
        client.getTransactionCount({ address: holder, blockNumber: height }),
      ]);
      expect(bodies, form).toHaveLength(1);
      expect(bodies[0], form).toHaveLength(6);
      expect(chainId, form).toBe(990001);
      expect(blockNumber, form).toBeGreaterThanOrEqual(height);
      expect(balance, form).toBe(await direct.getBalance({ address: holder, blockNumber: height }));
      expect(supply, form).toBe(SUPPLY);
      expect(block.hash, form).toBe((await direct.getBlock({ blockNumber: height })).hash);
      expect(nonce, form).toBe(await direct.getTransactionCount({ address: holder, blockNumber: height }));
    }
  });

  it("sends a locally signed transaction with eth_sendRawTransaction; one signed for the real chain is rejected", async () => {
    const account = await fundedAccount(directUrl);
    const signed = await account.signTransaction(transferTx(990001));
    const hash = await result<Hex>("eth_sendRawTransaction", [signed]);
    expect(hash).toBe(keccak256(signed));
    const receipt = await waitFor("the receipt", () => result<{ status: string } | null>("eth_getTransactionReceipt", [hash]).then((r) => r ?? undefined));
    expect(receipt.status).toBe("0x1");
    // Replay protection: a transaction signed for Ethereum Mainnet (chain id 1) is not accepted.
    const replay = await node(req(2, "eth_sendRawTransaction", [await account.signTransaction(transferTx(1, 1))]));
    expect(replay.id).toBe(2);
    expect(replay.error).toEqual({ code: -32003, message: expect.stringContaining("chain id") }); // anvil's answer, passed through
    expect(replay.result).toBeUndefined();
  });
});

describe("ethers against the node endpoint", () => {
  // ethers' JsonRpcProvider batches the calls made within 10 ms itself (a JSON-RPC batch per
  // stall), and FetchRequest carries the key header: both forms of the URL, unmodified.
  const providers = () => {
    const request = new FetchRequest(`${gw.url}/node/${NET}`);
    request.setHeader("X-API-KEY", enterprise.apiKey);
    return {
      header: new JsonRpcProvider(request, undefined, { staticNetwork: true }),
      path: new JsonRpcProvider(`${gw.url}/node/${NET}/${enterprise.apiKey}`, undefined, { staticNetwork: true }),
    };
  };

  it("reads the network, blocks, balances and an ERC-20 with Contract, in header and path form", async () => {
    const network = networkBySlug(NET)!;
    for (const [form, provider] of Object.entries(providers())) {
      try {
        expect((await provider.getNetwork()).chainId, form).toBe(BigInt(network.devnetChainId!));
        const height = await direct.getBlockNumber({ cacheTime: 0 });
        const holder = traffic.holders[1]!;
        const token = new Contract(traffic.token, ["function totalSupply() view returns (uint256)", "function balanceOf(address) view returns (uint256)"], provider);
        const [block, balance, supply, tokens] = await Promise.all([
          provider.getBlock(Number(height)),
          provider.getBalance(holder, Number(height)),
          token.getFunction("totalSupply").staticCall({ blockTag: Number(height) }) as Promise<bigint>,
          token.getFunction("balanceOf").staticCall(holder, { blockTag: Number(height) }) as Promise<bigint>,
        ]);
        const expected = await direct.getBlock({ blockNumber: height });
        expect(block?.hash, form).toBe(expected.hash);
        expect(block?.number, form).toBe(Number(height));
        expect(block?.transactions, form).toEqual(expected.transactions);
        expect(balance, form).toBe(await direct.getBalance({ address: holder, blockNumber: height }));
        expect(supply, form).toBe(SUPPLY);
        expect(tokens, form).toBe(await direct.readContract({ address: traffic.token, abi: BlockgateToken.abi, functionName: "balanceOf", args: [holder], blockNumber: height }));
      } finally {
        provider.destroy();
      }
    }
  });

  it("sends a transfer with a Wallet (nonce, fees and gas from the endpoint) and waits for its receipt", async () => {
    // A key funded straight on anvil, signing in ethers; the transfer goes to a fresh address.
    const key = generatePrivateKey();
    expect((await rpcDirect(directUrl, "anvil_setBalance", [privateKeyToAccount(key).address, "0xde0b6b3a7640000"])).error).toBeUndefined();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const { header } = providers();
    try {
      const wallet = new Wallet(key, header);
      const sent = await wallet.sendTransaction({ to, value: 12_345n });
      const receipt = await sent.wait(1, 20_000);
      expect(receipt?.status).toBe(1);
      expect(receipt?.hash).toBe(sent.hash);
      expect((await direct.getTransaction({ hash: sent.hash as Hex })).value).toBe(12_345n);
      expect(await direct.getBalance({ address: to })).toBe(12_345n);
    } finally {
      header.destroy();
    }
  });
});

describe("raw JSON-RPC", () => {
  it("answers a batch in order, a bad item in the middle an error with its id", async () => {
    const answers = await node<Answer[]>([
      req(1, "eth_chainId", []),
      req(2, "eth_getBlockByNumber", ["0x1", false]),
      { jsonrpc: "1.0", id: "bad", method: "eth_chainId" },
      42,
      req(3, "eth_getBalance", [traffic.holders[0], "latest"]),
      req(4, "net_version"),
    ]);
    expect(answers).toHaveLength(6);
    expect(answers.map((a) => a.id)).toEqual([1, 2, "bad", null, 3, 4]);
    expect(answers[0]).toEqual({ jsonrpc: "2.0", id: 1, result: "0xf1b31" });
    expect(answers[1]!.result).toMatchObject({ number: "0x1" });
    expect(answers[2]).toEqual({ jsonrpc: "2.0", id: "bad", error: { code: -32600, message: expect.stringContaining("jsonrpc") } });
    expect(answers[3]).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } });
    expect(answers[4]!.result).toMatch(/^0x[0-9a-f]+$/);
    expect(answers[5]).toEqual({ jsonrpc: "2.0", id: 4, result: "990001" });
  });

  it("echoes ids of every valid type unchanged, for local, cached and forwarded methods", async () => {
    const ids = ["abc", "", "1", 0, -5, 1.5, Number.MAX_SAFE_INTEGER, 1e300, null];
    for (const method of ["eth_chainId", "eth_blockNumber", "eth_getBalance"]) {
      const params = method === "eth_getBalance" ? [traffic.holders[0], "latest"] : [];
      const batch = await node<Answer[]>(ids.map((id) => req(id, method, params)));
      expect(batch.map((a) => a.id), method).toEqual(ids);
      expect(batch.every((a) => a.error === undefined && typeof a.result === "string"), method).toBe(true);
      for (const id of ids) expect((await node(req(id, method, params))).id, `${method} ${String(id)}`).toEqual(id);
    }
    // A request without an id is a notification: run, never answered.
    expect(await post(`/node/${NET}`, { jsonrpc: "2.0", method: "eth_chainId" }, { "X-API-KEY": enterprise.apiKey })).toMatchObject({ status: 204, text: "" });
  });

  it("keeps answers apart when a batch repeats an id", async () => {
    const answers = await node<Answer[]>([
      req(5, "eth_getBlockByNumber", ["0x1", false]),
      req(5, "eth_getBlockByNumber", ["0x2", false]),
      req(5, "eth_chainId"),
      req(5, "eth_getBlockByNumber", ["0x3", false]),
    ]);
    expect(answers.map((a) => a.id)).toEqual([5, 5, 5, 5]);
    expect(answers.map((a) => (a.result as { number?: string }).number ?? a.result)).toEqual(["0x1", "0x2", "0xf1b31", "0x3"]);
  });

  it("refuses an empty batch, more than 100 items, invalid JSON and what is not a JSON-RPC request", async () => {
    expect(await node("[]")).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("empty") } });
    const full = await node<Answer[]>(Array.from({ length: MAX_BATCH }, (_, i) => req(i, "eth_chainId")));
    expect(full).toHaveLength(100);
    expect(await node(Array.from({ length: MAX_BATCH + 1 }, (_, i) => req(i, "eth_chainId")))).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: expect.stringContaining("100") },
    });
    for (const body of ["{not json", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"', "", "\u0000"]) {
      expect(await node(body), body).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringContaining("JSON") } });
    }
    const notRequests: Array<[unknown, unknown]> = [
      [{ foo: 1 }, null],
      [42, null],
      ['"eth_chainId"', null],
      [null, null],
      [{ jsonrpc: "2.0", id: 1 }, 1],
      [{ jsonrpc: "2.0", id: 2, method: "" }, 2],
      [{ jsonrpc: "2.0", id: 3, method: 7 }, 3],
      [{ id: 4, method: "eth_chainId" }, 4],
      [{ jsonrpc: "2.0", id: 5, method: "eth_chainId", params: "x" }, 5],
      [{ jsonrpc: "2.0", id: { a: 1 }, method: "eth_chainId" }, null],
      [{ jsonrpc: "2.0", id: [1], method: "eth_chainId" }, null],
    ];
    for (const [body, id] of notRequests) {
      expect(await node(body), JSON.stringify(body)).toEqual({ jsonrpc: "2.0", id, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } });
    }
  });

  it("refuses unknown methods, node administration and devnet control with -32601", async () => {
    const probe = await fundedAccount(directUrl, 0n);
    const refused = [
      "eth_notAMethod",
      "foo",
      "admin_peers",
      "admin_addPeer",
      "anvil_setBalance",
      "anvil_mine",
      "evm_mine",
      "evm_snapshot",
      "personal_listAccounts",
      "personal_unlockAccount",
      "debug_getRawBlock",
      "miner_stop",
      "txpool_content",
      "hardhat_setBalance",
      "eth_subscribe",
    ];
    const answers = await node<Answer[]>(refused.map((m, i) => req(i, m, m.endsWith("setBalance") ? [probe.address, "0xffff"] : [])));
    answers.forEach((a, i) => {
      expect(a, refused[i]).toEqual({ jsonrpc: "2.0", id: i, error: { code: -32601, message: expect.stringContaining(refused[i]!) } });
      expect(a.error!.message, refused[i]).toMatch(/not available|WebSocket/);
    });
    // Nothing reached the node: the balance anvil_setBalance would have set is still 0.
    expect(await direct.getBalance({ address: probe.address })).toBe(0n);
  });

  it("refuses eth_sendTransaction and signing methods with advice to use eth_sendRawTransaction", async () => {
    // anvil would send it from its unlocked account: the gateway must not forward it.
    const from = traffic.holders[3]!;
    const to = privateKeyToAccount(generatePrivateKey()).address;
    for (const method of ["eth_sendTransaction", "eth_sign", "eth_signTransaction", "eth_signTypedData_v4"]) {
      const a = await node(req(7, method, [{ from, to, value: "0x1" }]));
      expect(a, method).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: expect.stringContaining("eth_sendRawTransaction") } });
    }
    expect(await direct.getBalance({ address: to, blockTag: "pending" })).toBe(0n);
  });

  it("serves debug_traceTransaction on Enterprise and refuses it on the free plan", async () => {
    const [log] = await direct.getLogs({ address: traffic.token, event: TransferEvent, fromBlock: 0n, toBlock: "latest" });
    const hash = log!.transactionHash;
    const trace = await result<{ failed: boolean; gas: number }>("debug_traceTransaction", [hash]);
    expect(trace.failed).toBe(false);
    expect(trace.gas).toBeGreaterThan(21_000);
    const refused = await node(req(1, "debug_traceTransaction", [hash]), { key: free.apiKey });
    expect(refused).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: expect.stringContaining("plan") } });
  });

  it("refuses a body over 1 MB with HTTP 413 CONTENTS_TOO_LARGE in header and path form", async () => {
    const big = JSON.stringify(req(1, "eth_call", [{ to: traffic.token, data: "0x" + "00".repeat(600 * 1024) }, "latest"]));
    expect(big.length).toBeGreaterThan(1024 * 1024);
    for (const r of [await post(`/node/${NET}`, big, { "X-API-KEY": enterprise.apiKey }), await post(`/node/${NET}/${enterprise.apiKey}`, big)]) {
      expect(r.status).toBe(413);
      expect(r.json).toEqual({ code: "CONTENTS_TOO_LARGE", message: expect.any(String) });
    }
    // Just under the limit is served.
    const under = req(1, "eth_call", [{ to: traffic.token, data: "0x18160ddd" + "00".repeat(400 * 1024) }, "latest"]);
    expect((await node(under)).id).toBe(1);
  });

  it("passes the node's JSON-RPC errors through as the node sent them", async () => {
    const cases: Array<[string, unknown[]]> = [
      ["eth_getBalance", ["0x1234", "latest"]],
      ["eth_getBalance", [traffic.holders[0], "0xffffffffff"]],
      ["eth_getBlockByNumber", ["not a block", false]],
      // A reverting call: ERC20InsufficientBalance with its revert data.
      ["eth_call", [{ from: "0x000000000000000000000000000000000000dEaD", to: traffic.token, data: "0xa9059cbb" + traffic.holders[0]!.slice(2).toLowerCase().padStart(64, "0") + "1".padStart(64, "0") }, "latest"]],
    ];
    for (const [method, params] of cases) {
      const expected = await rpcDirect(directUrl, method, params);
      expect(expected.error, method).toBeDefined();
      const ours = await node(req("e", method, params));
      expect(ours, `${method} ${JSON.stringify(params)}`).toEqual({ jsonrpc: "2.0", id: "e", error: expected.error });
    }
  });
});

describe("upstream failover", () => {
  const CHAIN_ID = 80002; // polygon-amoy's real id: a network on upstreams answers with it
  const KAIA_ID = 8217;
  const KAIROS_ID = 1001;
  const SLUG = "polygon-amoy";
  let a1: BareAnvil;
  let a2: BareAnvil;
  let a3: BareAnvil | undefined;
  /** Second nodes of two other networks, of their real chains (the pool checks chain ids). */
  let kaia: BareAnvil;
  let kairos: BareAnvil;
  /** Accepts a request, reads it, then hangs up: a node that may have received it. */
  let dropper: Server;
  let dropped = 0;
  /**
   * Servers on the ports of the nodes killed here, hanging up on every connection: a dead node's
   * port stays dead (another test file's server could otherwise take it and answer in its place).
   */
  const holders: Server[] = [];
  const holdPort = async (port: number) => {
    const holder = createServer((request) => request.socket.destroy());
    await new Promise<void>((resolve, reject) => {
      holder.once("error", reject);
      holder.listen(port, "127.0.0.1", resolve);
    });
    holders.push(holder);
  };
  const marker = privateKeyToAccount(generatePrivateKey()).address;

  const amoy = (body: unknown, slug = SLUG) => node(body, { slug });
  const markerBalance = async (slug = SLUG) => {
    const a = await amoy(req("m", "eth_getBalance", [marker, "latest"]), slug);
    expect(a.error, JSON.stringify(a.error)).toBeUndefined();
    return BigInt(a.result as string);
  };

  beforeAll(async () => {
    [a1, a2, kaia, kairos] = await Promise.all([
      spawnAnvil({ chainId: CHAIN_ID, blockTimeSec: 1 }),
      spawnAnvil({ chainId: CHAIN_ID, blockTimeSec: 1 }),
      spawnAnvil({ chainId: KAIA_ID }),
      spawnAnvil({ chainId: KAIROS_ID }),
    ]);
    // The same account holds 1 wei on the first node and 2 on the second: tells which one answered.
    await rpcDirect(a1.url, "anvil_setBalance", [marker, "0x1"]);
    await rpcDirect(a2.url, "anvil_setBalance", [marker, "0x2"]);
    await rpcDirect(kaia.url, "anvil_setBalance", [marker, "0x2"]);
    dropper = createServer((request) => {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        // The pool's chain id check (which a node that cannot answer does not block) is not counted.
        if (!Buffer.concat(chunks).toString().includes('"eth_chainId"')) dropped += 1;
        request.socket.destroy();
      });
    });
    await new Promise<void>((r) => dropper.listen(0, "127.0.0.1", r));
    const dropperUrl = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}`;
    const catalog = configureNetworks({
      ...BASE_ENV,
      UPSTREAM_POLYGON_AMOY: `${a1.url}, ${a2.url}`,
      UPSTREAM_KAIA_KAIROS: `${dropperUrl},${kairos.url}`,
      UPSTREAM_KAIA_MAINNET: `${dropperUrl},${kaia.url}`,
    });
    expect(catalog.find((n) => n.slug === SLUG)?.source).toEqual({ kind: "upstream", urls: [a1.url, a2.url] });
  }, 60_000);

  afterAll(async () => {
    configureNetworks(BASE_ENV);
    await Promise.all([a1?.stop("SIGKILL"), a2?.stop("SIGKILL"), a3?.stop("SIGKILL"), kaia?.stop("SIGKILL"), kairos?.stop("SIGKILL")]);
    await Promise.all(
      [dropper, ...holders].map(
        (server) =>
          new Promise<void>((resolve) => {
            if (!server) return resolve();
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  });

  it("serves from the first upstream while it is up", async () => {
    expect(await result("eth_chainId", [], { slug: SLUG })).toBe("0x13882");
    expect(await markerBalance()).toBe(1n);
    const batch = await amoy([req(1, "eth_blockNumber"), req(2, "eth_getBalance", [marker, "latest"]), req(3, "net_version")]);
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: expect.stringMatching(/^0x/) },
      { jsonrpc: "2.0", id: 2, result: "0x1" },
      { jsonrpc: "2.0", id: 3, result: "80002" },
    ]);
  });

  it("retries a read on the next upstream after a node hung up, but never a write that may have reached one", async () => {
    // Reads (kaia-mainnet): the dropper takes the request and hangs up; the second node answers.
    expect(await markerBalance("kaia-mainnet")).toBe(2n);
    expect(dropped).toBe(1);
    // Writes (kaia-kairos): not sent again once a node may have received them.
    const account = await fundedAccount(kairos.url);
    const signed = await account.signTransaction(transferTx(KAIROS_ID));
    const write = await amoy(req(9, "eth_sendRawTransaction", [signed]), "kaia-kairos");
    expect(write).toEqual({ jsonrpc: "2.0", id: 9, error: { code: -32603, message: expect.stringContaining("unreachable") } });
    expect(dropped).toBe(2);
    expect((await rpcDirect(kairos.url, "eth_getTransactionByHash", [keccak256(signed)])).result).toBeNull();
  });

  it("fails over to the second upstream when the first dies, invisibly for reads and for writes that never left", async () => {
    await a1.stop("SIGKILL");
    await sleep(200); // let the HTTP client see its kept-alive connection closed
    // First call after the crash: a write, which the first node (connection refused) never got.
    const account = await fundedAccount(a2.url);
    const signed = await account.signTransaction(transferTx(CHAIN_ID));
    expect(await amoy(req(1, "eth_sendRawTransaction", [signed]))).toEqual({ jsonrpc: "2.0", id: 1, result: keccak256(signed) });
    for (let i = 0; i < 5; i++) expect(await markerBalance()).toBe(2n);
    const batch = await amoy([req("a", "eth_getBalance", [marker, "latest"]), req("b", "eth_chainId"), req("c", "eth_getTransactionCount", [account.address, "pending"])]);
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: "a", result: "0x2" },
      { jsonrpc: "2.0", id: "b", result: "0x13882" },
      { jsonrpc: "2.0", id: "c", result: "0x1" },
    ]);
    // viem sees no error either.
    const client = createPublicClient({ transport: http(`${gw.url}/node/${SLUG}/${enterprise.apiKey}`, { retryCount: 0 }) });
    expect(await client.getBalance({ address: marker })).toBe(2n);
    expect(await client.getChainId()).toBe(CHAIN_ID);
    await holdPort(a1.port);
  });

  it("answers -32603 'upstream unreachable' when every upstream is down", async () => {
    await a2.stop("SIGKILL");
    await holdPort(a2.port);
    const single = await amoy(req(3, "eth_getBalance", [marker, "latest"]));
    expect(single).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: expect.stringContaining("upstream unreachable") } });
    expect(single.error!.message).not.toContain("127.0.0.1"); // upstream URLs may hold secrets
    // Not eth_blockNumber: the first test's answer may still be fresh in the head cache (250 ms).
    const batch = await amoy([req(1, "eth_getBlockByNumber", ["latest", false]), req(2, "eth_chainId"), req(3, "eth_getBalance", [marker, "latest"])]);
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32603, message: expect.stringContaining("upstream unreachable") } },
      { jsonrpc: "2.0", id: 2, result: "0x13882" }, // answered from the catalog
      { jsonrpc: "2.0", id: 3, error: { code: -32603, message: expect.stringContaining("upstream unreachable") } },
    ]);
  });

  // The upstream pool follows a catalog rebuilt with other URLs (it used to keep the first ones).
  it("follows the catalog when the network is pointed at other upstreams", async () => {
    a3 = await spawnAnvil({ chainId: CHAIN_ID });
    await amoy(req(1, "eth_blockNumber")); // the pool for the URLs configured above exists from here on
    configureNetworks({ ...BASE_ENV, UPSTREAM_POLYGON_AMOY: a3.url });
    expect(await markerBalance()).toBe(0n); // a3 never saw the marker
  });
});

describe("upstream chain check", () => {
  let mainnet: BareAnvil;
  let sepolia: BareAnvil;
  const marker = privateKeyToAccount(generatePrivateKey()).address;

  beforeAll(async () => {
    [mainnet, sepolia] = await Promise.all([spawnAnvil({ chainId: 1 }), spawnAnvil({ chainId: 11155111 })]);
    await rpcDirect(mainnet.url, "anvil_setBalance", [marker, "0x1"]);
    await rpcDirect(sepolia.url, "anvil_setBalance", [marker, "0x2"]);
    // Both networks pointed first at a node of the other chain (a copy-paste slip in the config).
    configureNetworks({ ...BASE_ENV, UPSTREAM_ETHEREUM_MAINNET: `${sepolia.url},${mainnet.url}`, UPSTREAM_ETHEREUM_SEPOLIA: mainnet.url });
  }, 60_000);

  afterAll(async () => {
    configureNetworks(BASE_ENV);
    await Promise.all([mainnet?.stop("SIGKILL"), sepolia?.stop("SIGKILL")]);
  });

  it("leaves a node of another chain out, says so once, and uses the next one for reads and writes", async () => {
    const balance = () => result<string>("eth_getBalance", [marker, "latest"], { slug: "ethereum-mainnet" });
    for (let i = 0; i < 3; i++) expect(await balance()).toBe("0x1");
    const account = await fundedAccount(mainnet.url);
    const signed = await account.signTransaction(transferTx(1));
    expect(await node(req(1, "eth_sendRawTransaction", [signed]), { slug: "ethereum-mainnet" })).toEqual({ jsonrpc: "2.0", id: 1, result: keccak256(signed) });
    expect((await rpcDirect(sepolia.url, "eth_getTransactionByHash", [keccak256(signed)])).result).toBeNull();
    const said = devnets.upstreamLogs.filter((l) => l.network === "ethereum-mainnet" && l.msg.includes("is left out"));
    expect(said).toEqual([{ network: "ethereum-mainnet", level: "error", msg: `upstream ${sepolia.url} is left out: it serves chain 11155111, not 1 (check the network's UPSTREAM_ variable)` }]);
  });

  it("answers -32603 naming the chain when no node serves the right one", async () => {
    for (let i = 0; i < 2; i++) {
      const a = await node(req(i, "eth_blockNumber"), { slug: "ethereum-sepolia" });
      expect(a).toEqual({ jsonrpc: "2.0", id: i, error: { code: -32603, message: expect.stringContaining("upstream unreachable") } });
      expect(a.error!.message).toContain("serves chain 1, not 11155111");
      expect(a.error!.message).not.toContain("127.0.0.1");
    }
    // The catalog still answers what needs no node.
    expect(await result("eth_chainId", [], { slug: "ethereum-sepolia" })).toBe("0xaa36a7");
  });
});

describe("metering", () => {
  it("records the catalog's CU per method; errors cost nothing and count as errors", async () => {
    const p = await createTestProject("EVM metering"); // free plan: 300 CU/s, all of this is < 300 CU
    const key = { key: p.apiKey };
    const holder = traffic.holders[0]!;
    const height = `0x${(await direct.getBlockNumber({ cacheTime: 0 })).toString(16)}`;
    const calls: Array<{ body: unknown; ok: Record<string, number>; failed: Record<string, number> }> = [
      { body: req(1, "eth_chainId"), ok: { eth_chainId: 1 }, failed: {} },
      { body: req(2, "net_version"), ok: { net_version: 1 }, failed: {} },
      { body: req(3, "eth_blockNumber"), ok: { eth_blockNumber: 1 }, failed: {} },
      { body: req(4, "eth_blockNumber"), ok: { eth_blockNumber: 1 }, failed: {} }, // from the head cache: same price
      { body: req(5, "eth_getBalance", [holder, "latest"]), ok: { eth_getBalance: 1 }, failed: {} },
      { body: req(6, "eth_call", [{ to: traffic.token, data: "0x18160ddd" }, "latest"]), ok: { eth_call: 1 }, failed: {} },
      { body: req(7, "eth_getBlockByNumber", [height, false]), ok: { eth_getBlockByNumber: 1 }, failed: {} },
      { body: req(8, "eth_getLogs", [{ address: traffic.token, fromBlock: height, toBlock: height }]), ok: { eth_getLogs: 1 }, failed: {} },
      {
        body: [req(9, "eth_chainId"), req(10, "eth_getTransactionCount", [holder, "latest"]), req(11, "anvil_mine"), req(12, "eth_getBalance", ["0x12", "latest"]), { jsonrpc: "2.0" }],
        ok: { eth_chainId: 1, eth_getTransactionCount: 1 },
        failed: { unsupported: 1, eth_getBalance: 1, invalid: 1 },
      },
      { body: req(13, "debug_traceTransaction", ["0x" + "00".repeat(32)]), ok: {}, failed: { debug_traceTransaction: 1 } },
      { body: "{oops", ok: {}, failed: { invalid: 1 } },
      { body: "[]", ok: {}, failed: { invalid: 1 } },
    ];
    for (const c of calls) {
      const answers = await node<Answer | Answer[]>(c.body, key);
      const list = Array.isArray(answers) ? answers : [answers];
      const okCount = Object.values(c.ok).reduce((s, n) => s + n, 0);
      expect(list.filter((a) => a.error === undefined), JSON.stringify(list)).toHaveLength(okCount);
      expect(list.some((a) => a.error?.code === -32005), "rate limited").toBe(false);
    }
    const expected = new Map<string, { requests: number; errors: number; cu: number }>();
    for (const c of calls) {
      for (const [m, n] of Object.entries(c.ok)) {
        const e = expected.get(m) ?? { requests: 0, errors: 0, cu: 0 };
        expected.set(m, { requests: e.requests + n, errors: e.errors, cu: e.cu + n * EVM_METHODS[m]!.cu });
      }
      for (const [m, n] of Object.entries(c.failed)) {
        const e = expected.get(m) ?? { requests: 0, errors: 0, cu: 0 };
        expected.set(m, { requests: e.requests + n, errors: e.errors + n, cu: e.cu });
      }
    }
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    expect(rows.every((r) => r.network === NET)).toBe(true);
    const actual = new Map<string, { requests: number; errors: number; cu: number }>();
    for (const r of rows) {
      const a = actual.get(r.endpoint) ?? { requests: 0, errors: 0, cu: 0 };
      actual.set(r.endpoint, { requests: a.requests + r.requests, errors: a.errors + r.errors, cu: a.cu + Number(r.cu) });
    }
    expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    const total = [...expected.values()].reduce((s, e) => s + e.cu, 0);
    expect(total).toBe(5 + 5 + 10 + 10 + 20 + 26 + 16 + 75 + 5 + 20);
  });

  // A failure before the handler metered anything must never be labelled with a path segment: on
  // /node/<network>/<API_KEY> that segment is the key.
  it("records a request refused before metering under a method name, never under the key it came with", async () => {
    const p = await createTestProject("EVM metering 413");
    const big = JSON.stringify(req(1, "eth_chainId", ["x".repeat(1024 * 1024)]));
    expect((await post(`/node/${NET}/${p.apiKey}`, big)).status).toBe(413);
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.errors).toBe(1);
    expect(rows[0]!.endpoint).not.toBe(p.apiKey);
  });
});

describe("head cache", () => {
  const call = async (slug = NET) => BigInt(await result<string>("eth_blockNumber", [], { slug }));

  it("answers eth_blockNumber from the head cache for a fraction of the block time, then advances", async () => {
    await sleep(400); // any cached value has expired: the next call asks the node
    const first = await call();
    const returned = performance.now();
    const seen: bigint[] = [];
    while (performance.now() - returned < 50) seen.push(...(await Promise.all([call(), call()])));
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen)).toEqual(new Set([first]));
    // The node moves on; the gateway follows within a fraction of the block time.
    await waitFor("a new block on the node", async () => (await direct.getBlockNumber({ cacheTime: 0 })) > first, 5000, 20);
    const minedSeen = performance.now();
    const next = await waitFor("the next block through the gateway", async () => {
      const n = await call();
      return n > first && n;
    }, 5000, 20);
    expect(performance.now() - minedSeen).toBeLessThan((BLOCK_TIME_S * 1000) / 2);
    expect(next).toBeGreaterThan(first);
  });

  it("asks the node once however many calls arrive while the value is fresh", async () => {
    // A node of base-sepolia's real chain: the pool checks an upstream's chain id.
    const sepolia = await spawnAnvil({ chainId: 84532, blockTimeSec: 1 });
    const proxy = await startRecordingProxy(sepolia.url);
    try {
      configureNetworks({ ...BASE_ENV, UPSTREAM_BASE_SEPOLIA: proxy.url });
      const slug = "base-sepolia";
      const first = await call(slug);
      const returned = performance.now();
      const inBatch = await node<Answer[]>([req(1, "eth_blockNumber"), req(2, "eth_blockNumber", [])], { slug });
      expect(inBatch.map((a) => a.result)).toEqual([`0x${first.toString(16)}`, `0x${first.toString(16)}`]);
      let calls = 3;
      while (performance.now() - returned < 50) {
        const batch = await Promise.all([call(slug), call(slug), call(slug)]);
        expect(batch).toEqual([first, first, first]);
        calls += 3;
      }
      expect(calls).toBeGreaterThan(3);
      expect(proxy.methods.filter((m) => m === "eth_blockNumber")).toHaveLength(1);
      await sleep(400); // longer than the cache keeps a value
      await call(slug);
      expect(proxy.methods.filter((m) => m === "eth_blockNumber")).toHaveLength(2);
    } finally {
      configureNetworks(BASE_ENV);
      await proxy.close();
      await sepolia.stop("SIGKILL");
    }
  });
});

describe("single calls batched upstream", () => {
  it("answers concurrent callers each with its own id and the node's answer; our ids upstream, log queries and writes alone", async () => {
    const sepolia = await spawnAnvil({ chainId: 84532 });
    const proxy = await startRecordingProxy(sepolia.url);
    try {
      configureNetworks({ ...BASE_ENV, UPSTREAM_BASE_SEPOLIA: proxy.url });
      const slug = "base-sepolia";
      const account = await fundedAccount(sepolia.url);
      const holder = await fundedAccount(sepolia.url, 12_345n);
      const raw = await account.signTransaction(transferTx(84532));
      const calls: Array<[unknown, string, unknown[]]> = [];
      for (let i = 0; i < 8; i++) {
        calls.push([i, "eth_getBlockByNumber", ["0x0", i % 2 === 0]]);
        calls.push([`caller-${i}`, "eth_getBalance", [holder.address, "latest"]]);
      }
      calls.push([100, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]], [101, "eth_sendRawTransaction", [raw]]);
      const answers = await Promise.all(calls.map(([id, method, params]) => node(req(id, method, params), { slug })));
      for (const [i, [id, method, params]] of calls.entries()) {
        if (method === "eth_sendRawTransaction") continue;
        const expected = (await rpcDirect(sepolia.url, method, params)) as Answer;
        expect(answers[i], `${method} ${String(id)}`).toEqual({ jsonrpc: "2.0", id, result: expected.result });
      }
      expect(answers.at(-1)).toMatchObject({ id: 101, result: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const sent = proxy.bodies.map((b) => JSON.parse(b) as { id: unknown; method: string } | Array<{ id: unknown; method: string }>);
      for (const body of sent) {
        const items = Array.isArray(body) ? body : [body];
        expect(items.map((x) => x.id)).toEqual(items.map((_x, i) => i));
        if (Array.isArray(body)) expect(body.some((x) => x.method === "eth_getLogs" || x.method === "eth_sendRawTransaction")).toBe(false);
      }
      expect(proxy.methods.filter((m) => m !== "eth_chainId")).toHaveLength(calls.length);
    } finally {
      configureNetworks(BASE_ENV);
      await proxy.close();
      await sepolia.stop("SIGKILL");
    }
  });
});

describe("the JSON-RPC envelope: notifications, ids, nesting and the rate limit", () => {
  const note = (method: string, params?: unknown) => ({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });

  it("runs and meters notifications (no id) but answers them with 204 and no body; a mixed batch answers only the rest", async () => {
    const p = await createTestProject("EVM notifications");
    const h = { "X-API-KEY": p.apiKey };
    const holder = traffic.holders[0]!;
    for (const body of [note("eth_chainId"), note("eth_getBalance", [holder, "latest"])]) {
      const r = await post(`/node/${NET}`, body, h);
      expect(r.status, JSON.stringify(body)).toBe(204);
      expect(r.text).toBe("");
      expect(r.headers.get("content-type")).toBeNull();
      expect(r.headers.get("x-request-id")).toMatch(/^req_/);
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
    }
    const all = await post(`/node/${NET}`, [note("eth_blockNumber"), note("eth_getBalance", [holder, "latest"]), note("anvil_mine")], h);
    expect(all).toMatchObject({ status: 204, text: "" });
    const mixed = await node<Answer[]>(
      [note("eth_chainId"), req(1, "eth_getBalance", [holder, "latest"]), note("eth_getBalance", ["0x12", "latest"]), req(null, "net_version"), note("eth_getBalance", [holder, "latest"])],
      { key: p.apiKey },
    );
    expect(mixed).toEqual([
      { jsonrpc: "2.0", id: 1, result: expect.stringMatching(/^0x[0-9a-f]+$/) },
      { jsonrpc: "2.0", id: null, result: "990001" },
    ]);
    expect(await gw.usageByEndpoint(p.projectId)).toEqual({
      eth_chainId: { requests: 2, errors: 0, cu: 10 },
      eth_getBalance: { requests: 5, errors: 1, cu: 80 },
      eth_blockNumber: { requests: 1, errors: 0, cu: 10 },
      unsupported: { requests: 1, errors: 1, cu: 0 },
      net_version: { requests: 1, errors: 0, cu: 5 },
    });
  });

  it("echoes numeric ids exactly as written, for local and forwarded methods, single and in batches", async () => {
    const h = { "X-API-KEY": enterprise.apiKey };
    const big = "123456789012345678901234567890";
    const holder = traffic.holders[0]!;
    const local = await post(`/node/${NET}`, `{"jsonrpc":"2.0","id":${big},"method":"eth_chainId"}`, h);
    expect(local.text).toBe(`{"jsonrpc":"2.0","id":${big},"result":"0xf1b31"}`);
    const forwarded = await post(`/node/${NET}`, `{"jsonrpc":"2.0","id":${big},"method":"eth_getBalance","params":["${holder}","latest"]}`, h);
    expect(forwarded.text).toMatch(new RegExp(`^\\{"jsonrpc":"2\\.0","id":${big},"result":"0x[0-9a-f]+"\\}$`));
    const batch = await post(
      `/node/${NET}`,
      `[{"jsonrpc":"2.0","id":1.0e3,"method":"eth_chainId"},{"jsonrpc":"2.0","id":-0,"method":"eth_getBalance","params":["${holder}","latest"]},{"jsonrpc":"2.0","id":12.50,"method":"anvil_mine"},{"jsonrpc":"2.0","id":${big},"method":""}]`,
      h,
    );
    expect(batch.text).toMatch(/^\[\{"jsonrpc":"2\.0","id":1\.0e3,"result":"0xf1b31"\},\{"jsonrpc":"2\.0","id":-0,"result":"0x[0-9a-f]+"\},\{"jsonrpc":"2\.0","id":12\.50,"error":\{"code":-32601,[^\]]*\},\{"jsonrpc":"2\.0","id":123456789012345678901234567890,"error":\{"code":-32600,[^\]]*\}\]$/);
  });

  it("refuses a body nested 10,000 levels deep with −32600, id null, before anything reaches the node", async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${"[".repeat(10_000)}${"]".repeat(10_000)},"latest"]}`;
    expect(await node(deep)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: the body nests arrays and objects deeper than 64 levels" } });
    expect(await node(`[${deep}]`)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("64 levels") } });
  });

  it("answers what the rate limit refused with −32005 in a batch that ran, HTTP 429 with Retry-After when nothing ran; meters only what ran", async () => {
    const p = await createTestProject("EVM rate limit"); // free plan: 300 CU per second, one second of burst
    const holder = traffic.holders[0]!;
    // 10 eth_getBalance (200 CU) and 20 eth_chainId (100 CU) fit; the last 10 do not. Each item is charged in order before any runs.
    const items = [...Array.from({ length: 10 }, (_, i) => req(i, "eth_getBalance", [holder, "latest"])), ...Array.from({ length: 30 }, (_, i) => req(10 + i, "eth_chainId"))];
    const answers = await node<Answer[]>(items, { key: p.apiKey });
    expect(answers.map((a) => a.id)).toEqual(items.map((i) => i.id));
    expect(answers.slice(0, 30).every((a) => a.error === undefined && typeof a.result === "string")).toBe(true);
    for (const a of answers.slice(30)) {
      expect(a).toEqual({ jsonrpc: "2.0", id: a.id, error: { code: -32005, message: expect.stringContaining("Rate limit of 300 CU per second exceeded"), data: { retryAfter: 1 } } });
    }
    expect(await gw.usageByEndpoint(p.projectId)).toEqual({ eth_getBalance: { requests: 10, errors: 0, cu: 200 }, eth_chainId: { requests: 30, errors: 10, cu: 100 } });

    // Empty a fresh project's bucket at once (eth_chainId needs no node), then a single request and
    // a batch of which nothing runs. The bucket refills 87 CU in 290 ms: a machine slow enough to
    // take longer between the two gets another try with another project.
    const call = { to: traffic.token, data: "0x18160ddd" };
    let drained = p;
    let refused: Awaited<ReturnType<typeof post>>[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      drained = await createTestProject("EVM rate limit, drained");
      await post(`/node/${NET}`, Array.from({ length: 100 }, (_, i) => req(i, "eth_chainId")), { "X-API-KEY": drained.apiKey });
      refused = await Promise.all([
        post(`/node/${NET}`, req(1, "eth_estimateGas", [call]), { "X-API-KEY": drained.apiKey }),
        post(`/node/${NET}/${drained.apiKey}`, [req(1, "eth_estimateGas", [call]), note("eth_estimateGas", [call])]),
      ]);
      if (refused.every((r) => r.status === 429)) break;
    }
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.json).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("Rate limit of 300 CU per second exceeded") });
    }
    expect((await gw.usageByEndpoint(drained.projectId)).eth_estimateGas).toEqual({ requests: 3, errors: 3, cu: 0 });
  });
});
