import { captureLogs } from "@/lib/testing/logs";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeAbiParameters,
  getAbiItem,
  getAddress,
  getContractAddress,
  isAddressEqual,
  http,
  pad,
  toEventSelector,
  toHex,
  type Address,
  type PublicClient,
} from "viem";
import { freePort } from "@/lib/testing/ports";
import { ARTIFACTS_PATH, loadSolc, renderArtifacts } from "./contracts/compile";
import { BlockgateToken, DEVNET_CONTRACTS, Emitter, devnetContractAddresses } from "./contracts";
import { startTrafficGenerator, type TrafficGenerator } from "./traffic";

const ANVIL = path.resolve(import.meta.dirname, "../../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil");
const CHAIN_ID = 990001;
const SUPPLY = BigInt(DEVNET_CONTRACTS.token.totalSupply);
const TransferEvent = getAbiItem({ abi: BlockgateToken.abi, name: "Transfer" });
const PingEvent = getAbiItem({ abi: Emitter.abi, name: "Ping" });

const solc = await loadSolc();

interface Anvil {
  url: string;
  client: PublicClient;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startAnvil(extra: string[] = []): Promise<Anvil> {
  const port = await freePort();
  const args = ["--port", String(port), "--host", "127.0.0.1", "--chain-id", String(CHAIN_ID), "--block-time", "1", "--silent", ...extra];
  const child = spawn(ANVIL, args, { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ transport: http(url, { retryCount: 0 }), pollingInterval: 100 });
  for (let until = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new Error(`anvil exited with code ${child.exitCode}`);
    try {
      expect(await client.getChainId()).toBe(CHAIN_ID);
      break;
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    client,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM"); // with --state, anvil writes its state on the way out
      }),
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Sum of the holders' pending nonces: grows with every transaction they send. */
async function sentCount(client: PublicClient, holders: Address[]): Promise<number> {
  const nonces = await Promise.all(holders.map((address) => client.getTransactionCount({ address, blockTag: "pending" })));
  return nonces.reduce((a, b) => a + b, 0);
}

describe("devnet contract artifacts", () => {
  it.skipIf(!solc)("artifacts.ts is what the sources compile to (npm run contracts)", async () => {
    const fresh = await renderArtifacts(solc!);
    expect(await readFile(ARTIFACTS_PATH, "utf8")).toBe(fresh);
  });

  it("describes the events with their signatures and topic0", () => {
    const { Transfer, Approval } = DEVNET_CONTRACTS.token.events;
    expect(Transfer.topic0).toBe("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
    expect(Approval.topic0).toBe("0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925");
    expect(toEventSelector(TransferEvent)).toBe(Transfer.topic0);
    expect(toEventSelector(getAbiItem({ abi: BlockgateToken.abi, name: "Approval" }))).toBe(Approval.topic0);
    expect(toEventSelector(PingEvent)).toBe(DEVNET_CONTRACTS.emitter.events.Ping.topic0);
    expect(DEVNET_CONTRACTS.emitter.events.Ping.signature).toBe("Ping(address,uint256,string,uint256)");
    expect(JSON.parse(JSON.stringify(DEVNET_CONTRACTS))).toEqual(DEVNET_CONTRACTS); // plain data
  });
});

describe("traffic generator on a real anvil", () => {
  let anvil: Anvil;
  let gen: TrafficGenerator | undefined;
  const { logger, messages: logs } = captureLogs();

  beforeAll(async () => {
    anvil = await startAnvil();
  });
  afterAll(async () => {
    await gen?.stop();
    await anvil?.stop();
  });

  it("deploys the contracts, distributes tokens and produces transfers and pings", async () => {
    const { client } = anvil;
    const start = await client.getBlockNumber();
    gen = await startTrafficGenerator({ rpcUrl: anvil.url, network: "ethereum-mainnet", intervalMs: 300, logger });
    const accounts = (await createWalletClient({ transport: http(anvil.url) }).getAddresses()).map((a) => getAddress(a));
    expect(gen.holders).toEqual(accounts.slice(0, 10));
    expect(gen.holders).toHaveLength(10);
    // Deterministic: CREATE(accounts[0], 0) and CREATE(accounts[0], 1).
    expect({ token: gen.token, emitter: gen.emitter }).toEqual(devnetContractAddresses(accounts[0]!));
    expect(gen.token).toBe("0x5FbDB2315678afecb367f032d93F642f64180aa3"); // anvil's default mnemonic
    expect(logs.some((m) => m.includes("deployed token and emitter"))).toBe(true);

    const token = gen.token;
    const emitter = gen.emitter;
    await waitFor("a few blocks with pings", async () => {
      const pings = await client.getLogs({ address: emitter, event: PingEvent, fromBlock: start });
      return (await client.getBlockNumber()) >= start + 4n && pings.length >= 4;
    });

    // Transfer logs: the mint, the grants to the 9 other holders, traffic.
    const transfers = await client.getLogs({ address: token, event: TransferEvent, fromBlock: 0n });
    expect(transfers[0]?.args).toEqual({ from: "0x0000000000000000000000000000000000000000", to: accounts[0], value: SUPPLY });
    expect(transfers.length).toBeGreaterThan(10);
    expect(transfers.every((l) => l.topics[0] === DEVNET_CONTRACTS.token.events.Transfer.topic0)).toBe(true);
    const holders = new Set(gen.holders);
    const traffic = transfers.slice(10);
    expect(traffic.length).toBeGreaterThan(0);
    for (const t of traffic) {
      expect(holders.has(t.args.from!) && holders.has(t.args.to!) && t.args.from !== t.args.to).toBe(true);
      expect(t.args.value! > 0n).toBe(true);
    }

    // Balances, read at one block, add up to the supply; everyone holds tokens.
    const blockNumber = await client.getBlockNumber();
    const read = (functionName: "totalSupply" | "decimals" | "symbol") =>
      client.readContract({ address: token, abi: BlockgateToken.abi, functionName, blockNumber });
    expect(await read("totalSupply")).toBe(SUPPLY);
    expect(await read("symbol")).toBe("BGT");
    expect(await read("decimals")).toBe(18);
    const balances = await Promise.all(
      gen.holders.map((a) => client.readContract({ address: token, abi: BlockgateToken.abi, functionName: "balanceOf", args: [a], blockNumber })),
    );
    expect(balances.reduce((a, b) => a + b, 0n)).toBe(SUPPLY);
    expect(balances.every((b) => b > 0n)).toBe(true);

    // Ping logs: sender and round in the topics, note and value in the data.
    const pings = await client.getLogs({ address: emitter, event: PingEvent, fromBlock: start });
    for (const p of pings.slice(0, 4)) {
      const { sender, round, note, value } = p.args;
      expect(p.topics[0]).toBe(DEVNET_CONTRACTS.emitter.events.Ping.topic0);
      expect(p.topics[1]).toBe(pad(sender!.toLowerCase() as Address));
      expect(p.topics[2]).toBe(toHex(round!, { size: 32 }));
      expect(decodeAbiParameters([{ type: "string" }, { type: "uint256" }], p.data)).toEqual([note, value]);
      expect(note).toMatch(/^\w+ from ethereum-mainnet$/);
      const tx = await client.getTransaction({ hash: p.transactionHash });
      expect(isAddressEqual(tx.from, sender!)).toBe(true);
      expect(tx.value).toBe(value);
      expect(value! >= 10n ** 9n && value! <= 1000n * 10n ** 9n).toBe(true);
      const receipt = await client.getTransactionReceipt({ hash: p.transactionHash });
      expect(receipt.status).toBe("success");
    }
    expect(pings.map((p) => p.args.round)).toEqual(pings.map((_, i) => BigInt(i + 1)));
  });

  it("reuses the contracts when started again, and stop() stops sending", async () => {
    const first = gen!;
    await first.stop();
    const logged = logs.length;
    gen = await startTrafficGenerator({ rpcUrl: anvil.url, network: "ethereum-mainnet", intervalMs: 300, logger });
    expect([gen.token, gen.emitter]).toEqual([first.token, first.emitter]);
    expect(logs.slice(logged)).toEqual([`token ${gen.token}, emitter ${gen.emitter} (already deployed)`]);

    const before = await sentCount(anvil.client, gen.holders);
    await waitFor("more traffic", async () => (await sentCount(anvil.client, gen!.holders)) > before + 2);
    await gen.stop();
    const stoppedAt = await sentCount(anvil.client, gen.holders);
    const testClient = createTestClient({ mode: "anvil", transport: http(anvil.url) });
    await waitFor("the mempool to drain", async () => (await testClient.getTxpoolStatus()).pending === 0);
    await new Promise((r) => setTimeout(r, 1500)); // five intervals, more than a block
    expect(await sentCount(anvil.client, gen.holders)).toBe(stoppedAt);
    const failures = logs.filter((m) => /revert|error|fail/i.test(m));
    expect(failures).toEqual([]);
  });
});

describe("traffic generator across an anvil restart with persisted state", () => {
  let dir: string;
  let anvil: Anvil | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "blockgate-anvil-state-"));
  });
  afterAll(async () => {
    await anvil?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("finds the contracts deployed before the restart instead of deploying again", async () => {
    const state = ["--state", path.join(dir, "state.json")];
    const { logger: captured, messages: logs, lines } = captureLogs();
    anvil = await startAnvil(state);
    const gen1 = await startTrafficGenerator({ rpcUrl: anvil.url, network: "base-sepolia", intervalMs: 300, logger: captured });
    await waitFor("a transfer", async () => (await anvil!.client.getLogs({ address: gen1.token, event: TransferEvent, fromBlock: 0n })).length > 10);
    // The node goes away under the running generator: one error line for the whole streak.
    await anvil.stop();
    await new Promise((r) => setTimeout(r, 1500));
    await gen1.stop();
    const errors = logs.filter((m) => m.includes("retrying every round"));
    expect(errors).toHaveLength(1);
    expect(lines.find((l) => l.msg === errors[0])).toMatchObject({ level: "warn", network: "base-sepolia", part: "traffic" });

    anvil = await startAnvil(state);
    const before = logs.length;
    const gen2 = await startTrafficGenerator({ rpcUrl: anvil.url, network: "base-sepolia", intervalMs: 300, logger: captured });
    await gen2.stop();
    expect([gen2.token, gen2.emitter]).toEqual([gen1.token, gen1.emitter]);
    expect(logs.slice(before)).toEqual([`token ${gen2.token}, emitter ${gen2.emitter} (already deployed)`]);
  });
});

describe("traffic generator when the deployer's first nonces are taken", () => {
  let anvil: Anvil | undefined;
  afterAll(async () => {
    await anvil?.stop();
  });

  it("deploys at the next nonces, says so, and still produces traffic", async () => {
    anvil = await startAnvil();
    const wallet = createWalletClient({ transport: http(anvil.url) });
    const [deployer, other] = await wallet.getAddresses();
    const hash = await wallet.sendTransaction({ account: deployer!, to: other!, value: 1n, chain: null });
    await anvil.client.waitForTransactionReceipt({ hash });

    const { logger: captured, messages: logs } = captureLogs();
    const gen = await startTrafficGenerator({ rpcUrl: anvil.url, network: "polygon-amoy", intervalMs: 300, logger: captured });
    expect(gen.token).toBe(getContractAddress({ from: deployer!, nonce: 1n }));
    expect(gen.emitter).toBe(getContractAddress({ from: deployer!, nonce: 2n }));
    expect(logs.filter((m) => m.includes("will be redeployed on every start"))).toHaveLength(2);
    await waitFor("a ping", async () => (await anvil!.client.getLogs({ address: gen.emitter, event: PingEvent, fromBlock: 0n })).length > 0);
    await gen.stop();
  });
});
