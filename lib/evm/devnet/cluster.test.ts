import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { networkBySlug, type Network } from "@/lib/networks";
import { captureLogs } from "@/lib/testing/logs";
import { connectTestDatabase } from "@/lib/testing/harness";
import { EvmBackends } from "../backends";
import { UpstreamUnavailable } from "../upstream";
import { leaderLockName } from "@/lib/workers/leader-lock";
import { answersRpc } from "./anvil";
import { DevnetDirectory, startDevnetHosts, type DevnetHostOptions } from "./cluster";

// Private copies of a catalog network: suites sharing the database never host them.
const network: Network = { ...networkBySlug("ethereum-holesky")!, slug: `evm-cluster-${randomBytes(4).toString("hex")}` };
const fencedNetwork: Network = { ...network, slug: `${network.slug}-fenced` };
const bounded: Network = { ...network, slug: `${network.slug}-bounded` };
const logs = captureLogs();
const dirs: string[] = [];
const stops: Array<() => Promise<void>> = [];
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  for (const slug of [network.slug, fencedNetwork.slug, bounded.slug]) {
    await db().$executeRaw`DELETE FROM devnet_endpoints WHERE network = ${slug}`;
    await db().$executeRaw`DELETE FROM devnet_states WHERE network = ${slug}`;
  }
  await db().$disconnect();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A web process's view of the devnets: its directory and the backends the node endpoint uses. */
function webProcess(waitMs?: number, net = network) {
  const directory = new DevnetDirectory({ databaseUrl, idleMs: 60_000, waitMs, logger: logs.logger });
  const backends = new EvmBackends();
  backends.configure({ devnets: directory, blockTimeMs: 1000 });
  stops.push(() => directory.stop());
  return {
    async rpc<T>(method: string, params: unknown[] = []): Promise<T> {
      const answer = (await (await backends.poolFor(net)).send(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), { retryable: false })) as { result?: T; error?: unknown };
      if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
      return answer.result as T;
    },
  };
}

/** A worker process (its own data directory, as on another host) that runs the devnets it holds. */
async function workerProcess(memberId: string, o: { network?: Network; saveBlocks?: number; retainBlocks?: number } = {}) {
  const net = o.network ?? network;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-devnet-host-"));
  dirs.push(dataDir);
  const options: DevnetHostOptions = { databaseUrl, memberId, dataDir, blockTimeSec: 1, idleMs: 60_000, saveBlocks: o.saveBlocks ?? 2, retainBlocks: o.retainBlocks, host: "127.0.0.1", advertiseHost: "127.0.0.1", logger: logs.logger, pollMs: 200 };
  const host = startDevnetHosts([net], options);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= host.stop());
  stops.push(stop);
  return { stop, anvilPid: () => Number(readFileSync(path.join(dataDir, net.slug, "anvil.pid"), "utf8")) };
}

async function registration(slug = network.slug) {
  const rows = await db().$queryRaw<{ url: string | null; holder: string | null }[]>`SELECT url, holder FROM devnet_endpoints WHERE network = ${slug}`;
  return rows[0];
}

async function savedBlock(slug = network.slug): Promise<number> {
  const rows = await db().$queryRaw<{ block_number: bigint }[]>`SELECT block_number FROM devnet_states WHERE network = ${slug}`;
  return Number(rows[0]?.block_number ?? -1);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (e) {
      last = e;
    }
    if (performance.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ""}\n${logs.messages.join("\n")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("EVM devnets in a cluster", () => {
  it("a network with no devnet running is refused as an unreachable upstream once the wait is over", async () => {
    const lonely = webProcess(300);
    const refused = await lonely.rpc("eth_blockNumber").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamUnavailable);
    expect((refused as Error).message).toMatch(`no devnet is running for ${network.slug}`);
  });

  it("two web processes see one chain, run by the worker holding its lock; when it dies another worker resumes the chain from the saved state", async () => {
    const a = await workerProcess("member-a");
    const web1 = webProcess();
    const web2 = webProcess();

    // The first call marks the network wanted; worker A starts its devnet and registers it.
    const accounts = await web1.rpc<string[]>("eth_accounts");
    expect(await registration()).toMatchObject({ holder: "member-a", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    // Worker B waits on the lock.
    const b = await workerProcess("member-b");

    const tx = await web1.rpc<string>("eth_sendTransaction", [{ from: accounts[0], to: accounts[1], value: "0x1234" }]);
    const receipt = await until("the transfer mined, seen through the other web process", () => web2.rpc<{ blockNumber: string } | null>("eth_getTransactionReceipt", [tx]).then((r) => r ?? undefined));
    const minedAt = Number(receipt.blockNumber);
    await until("the state saved past the transfer's block", async () => (await savedBlock()) >= minedAt);
    const saved = await savedBlock();
    const before = await registration();

    // Holder A dies: its anvil is killed (no last save) and its lock released.
    const pid = a.anvilPid();
    process.kill(pid, "SIGKILL");
    await a.stop();

    const after = await until("worker B registered a devnet", async () => {
      const r = await registration();
      return r?.holder === "member-b" && r.url ? r : undefined;
    });
    const head = await until("the chain answered through web process 1 again", async () => Number(await web1.rpc<string>("eth_blockNumber")));
    expect(after.url).not.toBe(before!.url);
    expect(b.anvilPid()).not.toBe(pid);
    // The chain goes on from the saved state: not back to block 0, and the transfer is still there.
    expect(head).toBeGreaterThanOrEqual(saved);
    expect(await web2.rpc<{ hash: string } | null>("eth_getTransactionByHash", [tx])).toMatchObject({ hash: tx });
    expect(await web1.rpc<{ status: string; blockNumber: string }>("eth_getTransactionReceipt", [tx])).toMatchObject({ status: "0x1", blockNumber: receipt.blockNumber });
    await until("a new block on the resumed chain", async () => Number(await web2.rpc<string>("eth_blockNumber")) > head);

    // A clean stop saves the state and clears the registration.
    await b.stop();
    expect(await registration()).toMatchObject({ url: null, holder: null });
    expect(await savedBlock()).toBeGreaterThan(head);
  }, 60_000);

  it("refuses the writes of a holder whose term is over (another worker took the lock): no URL registered, no state saved, no registration cleared", async () => {
    const slug = fencedNetwork.slug;
    const name = leaderLockName("evm-devnet", slug);
    const term = async () => (await db().$queryRaw<{ term: bigint }[]>`SELECT term FROM leader_terms WHERE name = ${name}`)[0]?.term;
    // What a new holder does to the term (leader-lock.ts): the old holder, stopped meanwhile, does not know.
    const takeOver = () => db().$executeRaw`UPDATE leader_terms SET term = term + 1 WHERE name = ${name}`;
    const linesOf = () => logs.lines.filter((l) => l.network === slug).map((l) => l.msg);
    // It saves only when it stops: every save seen here is one this test causes.
    const c = await workerProcess("member-c", { network: fencedNetwork, saveBlocks: 1_000_000 });
    await db().$executeRaw`INSERT INTO devnet_endpoints (network, wanted_at) VALUES (${slug}, now())`;

    // Worker C takes the lock and starts anvil; another worker takes the term before C registers it.
    let first: bigint | undefined;
    while ((first = await term()) === undefined) await new Promise((r) => setImmediate(r));
    await takeOver();
    // C's registration is refused; it stops that anvil, takes the lock again and registers a new one.
    const url = await until("worker C registered a devnet", async () => (await registration(slug))?.url ?? undefined);
    const started = linesOf().flatMap((m) => /^anvil devnet on (\S+)/.exec(m)?.[1] ?? []);
    expect(started).toHaveLength(2);
    expect(url).toBe(started[1]);
    expect(await answersRpc(started[0]!, 1000)).toBe(false);
    expect(linesOf().filter((m) => m.includes(`term ${first} of ${name} is over`))).toHaveLength(1);

    // C's term is over again: its last save and the clearing of its registration are refused, its anvil stopped.
    const current = (await term())!;
    await takeOver();
    await c.stop();
    expect(await answersRpc(url, 1000)).toBe(false);
    expect(await savedBlock(slug)).toBe(-1);
    expect(await registration(slug)).toMatchObject({ url, holder: "member-c" });
    expect(linesOf().filter((m) => m.includes(`term ${current} of ${name} is over`))).toHaveLength(1);

    // The current holder registers and saves.
    const d = await workerProcess("member-d", { network: fencedNetwork, saveBlocks: 1_000_000 });
    const next = await until("worker D registered a devnet", async () => {
      const r = await registration(slug);
      return r?.holder === "member-d" ? (r.url ?? undefined) : undefined;
    });
    expect(next).not.toBe(url);
    await d.stop();
    expect(await answersRpc(next, 1000)).toBe(false);
    expect(await savedBlock(slug)).toBeGreaterThanOrEqual(0);
    expect(await registration(slug)).toMatchObject({ url: null, holder: null });
  }, 30_000);

  it("keeps its newest blocks: past twice as many, it is restarted from its state trimmed to them and goes on from its head", async () => {
    const KEEP = 10;
    await workerProcess("member-e", { network: bounded, retainBlocks: KEEP });
    const web = webProcess(undefined, bounded);
    const accounts = await web.rpc<string[]>("eth_accounts");
    const tx = await web.rpc<string>("eth_sendTransaction", [{ from: accounts[0], to: accounts[1], value: "0x1234" }]);
    const receipt = await until("the transfer mined", () => web.rpc<{ blockNumber: string } | null>("eth_getTransactionReceipt", [tx]).then((r) => r ?? undefined));
    const before = (await registration(bounded.slug))!;
    // Past twice the window at once: the next step restarts it.
    await web.rpc("anvil_mine", [`0x${(2 * KEEP).toString(16)}`]);
    const minedTo = Number(await web.rpc<string>("eth_blockNumber"));
    const after = await until("the devnet restarted", async () => {
      const r = await registration(bounded.slug);
      return r?.url && r.url !== before.url ? r : undefined;
    });
    expect(after.url).not.toBe(before.url);
    // The devnet's own clock may have mined a block or two since.
    const restart = logs.messages.map((m) => new RegExp(`^restarted the devnet at block (\\d+) with its last ${KEEP} blocks`).exec(m)).find((m) => m !== null);
    const restartedAt = Number(restart?.[1]);
    expect(restartedAt).toBeGreaterThanOrEqual(minedTo);

    // The chain goes on from the same head, its older blocks and transactions gone as from a pruned node.
    const head = await until("the chain answering again", async () => Number(await web.rpc<string>("eth_blockNumber")));
    expect(head).toBeGreaterThanOrEqual(restartedAt);
    const at = (n: number) => web.rpc<{ hash: string; parentHash: string } | null>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
    expect(await at(restartedAt - KEEP)).toBeNull();
    expect(await at(restartedAt - KEEP + 1)).not.toBeNull();
    expect(await at(Number(receipt.blockNumber))).toBeNull();
    expect(await web.rpc("eth_getTransactionByHash", [tx])).toBeNull();
    const next = await until("a block mined after the restart", () => at(restartedAt + 1).then((b) => b ?? undefined));
    expect(next.parentHash).toBe((await at(restartedAt))!.hash);
    // The balance moved by the pruned transfer is still there: only history went.
    expect(BigInt(await web.rpc<string>("eth_getBalance", [accounts[1], "latest"]))).toBeGreaterThan(10_000n * 10n ** 18n);

    const [saved] = await db().$queryRaw<{ state: Uint8Array }[]>`SELECT state FROM devnet_states WHERE network = ${bounded.slug}`;
    const state = JSON.parse(gunzipSync(saved!.state).toString("utf8")) as { blocks: unknown[] };
    expect(state.blocks.length).toBeLessThanOrEqual(2 * KEEP);
  }, 60_000);
});
