import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
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
import { DevnetDirectory, startDevnetHosts, type DevnetHostOptions } from "./cluster";

// A private copy of a catalog network: suites sharing the database never host it.
const network: Network = { ...networkBySlug("ethereum-holesky")!, slug: `evm-cluster-${randomBytes(4).toString("hex")}` };
const logs = captureLogs();
const dirs: string[] = [];
const stops: Array<() => Promise<void>> = [];
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await db().$executeRaw`DELETE FROM devnet_endpoints WHERE network = ${network.slug}`;
  await db().$executeRaw`DELETE FROM devnet_states WHERE network = ${network.slug}`;
  await db().$disconnect();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A web process's view of the devnets: its directory and the backends the node endpoint uses. */
function webProcess(waitMs?: number) {
  const directory = new DevnetDirectory({ databaseUrl, idleMs: 60_000, waitMs, logger: logs.logger });
  const backends = new EvmBackends();
  backends.configure({ devnets: directory, blockTimeMs: 1000 });
  stops.push(() => directory.stop());
  return {
    async rpc<T>(method: string, params: unknown[] = []): Promise<T> {
      const answer = (await (await backends.poolFor(network)).send(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), { retryable: false })) as { result?: T; error?: unknown };
      if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
      return answer.result as T;
    },
  };
}

/** A worker process (its own data directory, as on another host) that runs the devnets it holds. */
async function workerProcess(memberId: string) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-devnet-host-"));
  dirs.push(dataDir);
  const options: DevnetHostOptions = { databaseUrl, memberId, dataDir, blockTimeSec: 1, idleMs: 60_000, saveBlocks: 2, host: "127.0.0.1", advertiseHost: "127.0.0.1", logger: logs.logger, pollMs: 200 };
  const host = startDevnetHosts([network], options);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= host.stop());
  stops.push(stop);
  return { stop, anvilPid: () => Number(readFileSync(path.join(dataDir, network.slug, "anvil.pid"), "utf8")) };
}

async function registration() {
  const rows = await db().$queryRaw<{ url: string | null; holder: string | null; term: bigint }[]>`SELECT url, holder, term FROM devnet_endpoints WHERE network = ${network.slug}`;
  return rows[0];
}

async function savedBlock(): Promise<number> {
  const rows = await db().$queryRaw<{ block_number: bigint }[]>`SELECT block_number FROM devnet_states WHERE network = ${network.slug}`;
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
    expect(after.term).toBeGreaterThan(before!.term);
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
});
