// EvmUpstream against a real anvil, through a recording pass-through that shows what reached the
// node: single calls of one turn of the event loop batched, answers passed on by id, nodes that
// write their answers otherwise or refuse batches.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EvmUpstream, NodeAnswer, UpstreamUnavailable } from "./upstream";
import { spawnAnvil, startRecordingProxy, type BareAnvil, type RecordingProxy } from "./testing";

let anvil: BareAnvil;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  anvil = await spawnAnvil({ chainId: 31337 });
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((o) => o.close()));
  await anvil?.stop("SIGKILL");
});

/** An EvmUpstream to the anvil through a recording proxy, and what its logger wrote. */
async function upstream(opts: { batchMax: number; rewrite?: (request: string, answer: string) => string }) {
  const proxy = await startRecordingProxy(anvil.url, { rewrite: opts.rewrite });
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const pool = new EvmUpstream([proxy.url], { network: "test", batchMax: opts.batchMax, logger });
  open.push(pool, proxy);
  return { pool, proxy, lines };
}

/** What anvil itself answers to one call (id 0). */
async function direct(method: string, params: unknown[]): Promise<Record<string, unknown>> {
  const r = await fetch(anvil.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 0, method, params }) });
  return (await r.json()) as Record<string, unknown>;
}

const batchSizes = (proxy: RecordingProxy) => proxy.bodies.map((b) => (Array.isArray(JSON.parse(b)) ? (JSON.parse(b) as unknown[]).length : 1));
const CALLS: Array<[string, unknown[]]> = [
  ["eth_getBlockByNumber", ["0x0", false]],
  ["eth_getBalance", ["0x0000000000000000000000000000000000000001", "latest"]],
  ["eth_chainId", []],
  ["eth_getBlockByNumber", ["0x0", true]],
  ["eth_getCode", ["0x0000000000000000000000000000000000000001", "latest"]],
  ["eth_gasPrice", []],
  ["web3_clientVersion", []],
  ["eth_getTransactionCount", ["0x0000000000000000000000000000000000000002", "latest"]],
  ["net_version", []],
  ["eth_getBlockByNumber", ["0x0", false]],
];

describe("EvmUpstream.call", () => {
  it("sends the first call at once and the others of that turn as batches of at most batchMax, and gives each call its own answer", async () => {
    const { pool, proxy } = await upstream({ batchMax: 4 });
    const answers = await Promise.all(CALLS.map(([m, p]) => pool.call(m, p)));
    expect(batchSizes(proxy)).toEqual([1, 4, 4, 1]);
    for (const [i, [method, params]] of CALLS.entries()) {
      const expected = await direct(method, params);
      expect(answers[i]!.plain, method).toBe(true);
      expect(answers[i]!.value()?.result, method).toEqual(expected.result);
      // Passed on with the caller's id, the text is the node's answer to that call.
      expect(JSON.parse(answers[i]!.withId('"caller-7"'))).toEqual({ ...expected, id: "caller-7" });
    }
  });

  it("sends a call alone when nothing else is waiting, and every call alone with batchMax 1", async () => {
    const one = await upstream({ batchMax: 50 });
    expect((await one.pool.call("eth_chainId", []))!.value()?.result).toBe("0x7a69");
    expect(one.proxy.bodies.map((b) => JSON.parse(b) as unknown)).toEqual([{ jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] }]);
    // One after the other: nothing is on its way when the next is made.
    for (const [m, p] of CALLS.slice(0, 3)) await one.pool.call(m, p);
    expect(batchSizes(one.proxy)).toEqual([1, 1, 1, 1]);
    const alone = await upstream({ batchMax: 1 });
    await Promise.all(CALLS.slice(0, 3).map(([m, p]) => alone.pool.call(m, p)));
    expect(batchSizes(alone.proxy)).toEqual([1, 1, 1]);
  });

  it("passes a node's errors on, per call, inside a batch", async () => {
    const { pool, proxy } = await upstream({ batchMax: 10 });
    const [, ok, bad] = await Promise.all([pool.call("net_version", []), pool.call("eth_chainId", []), pool.call("eth_getBalance", ["not an address", "latest"])]);
    expect(batchSizes(proxy)).toEqual([1, 2]);
    expect(ok!.value()?.result).toBe("0x7a69");
    expect(bad!.plain).toBe(false);
    expect(bad!.value()?.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  });

  it("reads answers written in another member order, shuffled, or left out of the batch", async () => {
    // A node that writes `result` first, answers the batch in reverse and leaves out one answer.
    const { pool, proxy } = await upstream({
      batchMax: 10,
      rewrite: (_request, answer) => {
        const items = JSON.parse(answer) as Array<{ id: number; result?: unknown; error?: unknown }>;
        if (!Array.isArray(items)) return answer;
        const rewritten = items.filter((a) => a.id !== 1).map((a) => ({ result: a.result, id: a.id, jsonrpc: "2.0" }));
        return JSON.stringify(rewritten.reverse());
      },
    });
    // The first goes alone (nothing else on its way yet), the next four as one batch.
    const answers = (await Promise.all(CALLS.slice(0, 5).map(([m, p]) => pool.call(m, p)))).slice(1);
    expect(batchSizes(proxy)).toEqual([1, 4]);
    expect(answers[1]).toBeUndefined();
    for (const i of [0, 2, 3]) {
      const [method, params] = CALLS[i + 1]!;
      expect(answers[i]!.plain).toBe(false);
      expect(answers[i]!.value()).toEqual({ ...(await direct(method, params)), id: i });
    }
  });

  it("sends each call alone, and no batch for a while, to a node that answers a batch with one error", async () => {
    const refusal = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch requests are not supported" } });
    const { pool, proxy, lines } = await upstream({ batchMax: 10, rewrite: (request, answer) => (request.startsWith("[") ? refusal : answer) });
    const first = await Promise.all(CALLS.slice(0, 4).map(([m, p]) => pool.call(m, p)));
    expect(batchSizes(proxy)).toEqual([1, 3, 1, 1, 1]);
    for (const [i, [method, params]] of CALLS.slice(0, 4).entries()) expect(first[i]!.value()?.result).toEqual((await direct(method, params)).result);
    await Promise.all(CALLS.slice(0, 4).map(([m, p]) => pool.call(m, p)));
    expect(batchSizes(proxy)).toEqual([1, 3, 1, 1, 1, 1, 1, 1, 1]);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain("one by one");
  });
});

describe("EvmUpstream.call when no node takes the batch", () => {
  it("sends each call alone to a node that answers a batch with no JSON-RPC answer, then no batch for a while", async () => {
    const { pool, proxy, lines } = await upstream({ batchMax: 10, rewrite: (request, answer) => (request.startsWith("[") ? "batch requests are not supported" : answer) });
    const first = await Promise.all(CALLS.slice(0, 4).map(([m, p]) => pool.call(m, p)));
    expect(batchSizes(proxy)).toEqual([1, 3, 1, 1, 1]);
    for (const [i, [method, params]] of CALLS.slice(0, 4).entries()) expect(first[i]!.value()?.result).toEqual((await direct(method, params)).result);
    await Promise.all(CALLS.slice(0, 4).map(([m, p]) => pool.call(m, p)));
    expect(batchSizes(proxy)).toEqual([1, 3, 1, 1, 1, 1, 1, 1, 1]);
    expect(lines.filter((l) => l.level === 40 && l.msg.includes("one by one"))).toHaveLength(1);
  });

  it("fails the calls of a batch as it would fail each when the node gives no answer at all, and keeps batching", async () => {
    // Reads each request, records it, and hangs up without an answer.
    const bodies: string[] = [];
    const hangUp = createServer((request) => {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        bodies.push(Buffer.concat(chunks).toString());
        request.socket.destroy();
      });
    });
    await new Promise<void>((resolve) => hangUp.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise<void>((resolve) => hangUp.close(() => resolve())) });
    const lines: Array<{ msg: string }> = [];
    const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    const pool = new EvmUpstream([`http://127.0.0.1:${(hangUp.address() as AddressInfo).port}`], { network: "test", batchMax: 10, logger });
    open.push(pool);
    for (let round = 0; round < 2; round++) {
      const outcomes = await Promise.allSettled(CALLS.slice(0, 3).map(([m, p]) => pool.call(m, p)));
      for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(UpstreamUnavailable);
    }
    // Each round: the first call alone, the other two as one batch, never sent again one by one.
    const sizes = bodies.map((b) => (Array.isArray(JSON.parse(b)) ? (JSON.parse(b) as unknown[]).length : 1));
    expect(sizes.filter((n) => n === 2)).toHaveLength(2);
    expect(sizes).toHaveLength(4);
    expect(lines.filter((l) => l.msg.includes("one by one"))).toHaveLength(0);
  });
});

describe("NodeAnswer", () => {
  it("passes on only results written in the plain form", () => {
    const plain = new NodeAnswer('{"jsonrpc":"2.0","id":12,"result":{"a":[1,"}"]}}');
    expect(plain.plain).toBe(true);
    expect(plain.plainId).toBe(12);
    expect(plain.withId("null")).toBe('{"jsonrpc":"2.0","id":null,"result":{"a":[1,"}"]}}');
    for (const text of [
      '{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"x"}}',
      '{"id":0,"jsonrpc":"2.0","result":1}',
      '{"jsonrpc":"2.0","id":"0","result":1}',
      '{"jsonrpc":"2.0","id":-1,"result":1}',
      '{"jsonrpc":"2.0","id":0 ,"result":1}',
    ]) {
      expect(new NodeAnswer(text).plain, text).toBe(false);
    }
    expect(new NodeAnswer('{"jsonrpc":"2.0","id":"0","result":1}').id()).toBeUndefined();
    expect(new NodeAnswer("not json").value()).toBeUndefined();
  });
});
