// Traffic for an anvil EVM devnet: deploys (or finds) the devnet contracts, gives tokens to the
// first accounts, then keeps sending token transfers and Emitter pings so that blocks carry
// transactions, receipts, logs and changing balances. Uses anvil's unlocked, prefunded accounts
// through eth_sendTransaction; no private keys.
import {
  BaseError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  getContractAddress,
  http,
  type Address,
  type Hash,
} from "viem";
import { METHOD_NOT_FOUND } from "@/lib/jsonrpc/errors";
import { componentLogger, type Logger } from "@/lib/log";
import { BlockgateToken, DEVNET_CONTRACTS, Emitter } from "./contracts";

export { DEVNET_CONTRACTS, devnetContractAddresses } from "./contracts";

export interface TrafficOptions {
  /** The devnet's JSON-RPC URL (anvil itself, not the gateway). */
  rpcUrl: string;
  /** Network slug, for log lines. */
  network: string;
  /** Time between rounds of traffic; default 2000 ms. */
  intervalMs?: number;
  /** Default: the "evm-devnet" component logger. Lines carry the network. */
  logger?: Logger;
}

export interface TrafficGenerator {
  token: Address;
  emitter: Address;
  /** Accounts holding tokens and sending the traffic: the first (up to) 10 of eth_accounts. */
  holders: Address[];
  /** Ends the loop and waits for a round in progress; no transaction is sent afterwards. */
  stop(): Promise<void>;
}

const HOLDERS = 10;
/** What each holder other than the deployer gets once: 10,000,000 BGT (1% of the supply). */
const HOLDER_GRANT = 10_000_000n * 10n ** 18n;
/** Rounds are skipped while the node's mempool holds more than this (mining stalled or slow). */
const MAX_PENDING = 64;
const RECEIPT_TIMEOUT_MS = 60_000;
const NOTES = ["gm", "hello", "ping", "blockgate", "devnet", "heartbeat", "probe", "tick"];

const randomInt = (n: number) => Math.floor(Math.random() * n);
const errorMessage = (e: unknown) => (e instanceof BaseError ? e.shortMessage : e instanceof Error ? e.message : String(e));

/** The devnet through viem: reads, anvil's unlocked accounts sending, and anvil's own methods. */
function connect(rpcUrl: string) {
  const transport = http(rpcUrl, { timeout: 10_000, retryCount: 1 });
  const pollingInterval = 250;
  return {
    pollingInterval,
    publicClient: createPublicClient({ transport, pollingInterval }),
    walletClient: createWalletClient({ transport, pollingInterval }),
    testClient: createTestClient({ mode: "anvil", transport, pollingInterval }),
  };
}

type Devnet = ReturnType<typeof connect>;

/** What a round of traffic works with. */
interface Traffic {
  devnet: Devnet;
  network: string;
  log: Logger;
  deployer: Address;
  holders: Address[];
  token: Address;
  emitter: Address;
}

async function waitForReceipts(devnet: Devnet, network: string, hashes: Hash[], what: string): Promise<void> {
  for (const hash of hashes) {
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
    if (receipt.status !== "success") throw new Error(`${network}: ${what} reverted (tx ${hash})`);
  }
}

/**
 * A previous generator may have left transactions of the deployer in the mempool; lets them be
 * mined (for up to 15 s) so that code checks and nonces see the settled state.
 */
async function settle(devnet: Devnet, deployer: Address): Promise<void> {
  for (let until = Date.now() + 15_000; Date.now() < until; ) {
    const [latest, pending] = await Promise.all([
      devnet.publicClient.getTransactionCount({ address: deployer, blockTag: "latest" }),
      devnet.publicClient.getTransactionCount({ address: deployer, blockTag: "pending" }),
    ]);
    if (latest === pending) return;
    await new Promise((r) => setTimeout(r, devnet.pollingInterval));
  }
}

/** The token and the emitter: reused at CREATE(deployer, 0) and CREATE(deployer, 1) when they hold our code, else deployed. */
async function deployContracts(devnet: Devnet, deployer: Address, network: string, log: Logger): Promise<{ token: Address; emitter: Address }> {
  const { publicClient, walletClient } = devnet;
  const specs = [
    { key: "token", name: "BlockgateToken", artifact: BlockgateToken, nonce: DEVNET_CONTRACTS.token.deployerNonce },
    { key: "emitter", name: "Emitter", artifact: Emitter, nonce: DEVNET_CONTRACTS.emitter.deployerNonce },
  ] as const;
  const found: { token?: Address; emitter?: Address } = {};
  const deploys: { key: "token" | "emitter"; hash: Hash }[] = [];
  for (const spec of specs) {
    const address = getContractAddress({ from: deployer, nonce: BigInt(spec.nonce) });
    const code = await publicClient.getCode({ address });
    if (code && code !== "0x") {
      // The runtime code our creation code produces, to tell our contract from anything else
      // there (for example the previous version's, in state persisted by an older Blockgate).
      const { data: runtime } = await publicClient.call({ account: deployer, data: spec.artifact.bytecode });
      if (runtime && runtime.toLowerCase() === code.toLowerCase()) {
        found[spec.key] = address;
        continue;
      }
      log.info(`${address} (deployer nonce ${spec.nonce}) holds other code than the current ${spec.name}; deploying a new one (reset the devnet's state for stable addresses)`);
    }
    const nonce = await publicClient.getTransactionCount({ address: deployer, blockTag: "pending" });
    const expected = getContractAddress({ from: deployer, nonce: BigInt(nonce) });
    if (nonce !== spec.nonce && !(code && code !== "0x")) {
      log.info(`deployer ${deployer} already used nonce ${spec.nonce} for something else; ${spec.key} goes to ${expected} and will be redeployed on every start`);
    }
    const hash = await walletClient.deployContract({
      abi: spec.artifact.abi as readonly unknown[],
      bytecode: spec.artifact.bytecode,
      account: deployer,
      chain: null,
    });
    deploys.push({ key: spec.key, hash });
  }
  for (const d of deploys) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: d.hash, timeout: RECEIPT_TIMEOUT_MS });
    if (receipt.status !== "success" || !receipt.contractAddress) {
      throw new Error(`${network}: deploying the ${d.key} contract failed (tx ${d.hash})`);
    }
    found[d.key] = getAddress(receipt.contractAddress);
  }
  const { token, emitter } = found;
  if (!token || !emitter) throw new Error(`${network}: devnet contracts missing after deployment`);
  log.info(
    deploys.length > 0
      ? `deployed ${deploys.map((d) => d.key).join(" and ")}; token ${token}, emitter ${emitter}`
      : `token ${token}, emitter ${emitter} (already deployed)`,
  );
  return { token, emitter };
}

const balanceOf = (t: Traffic, account: Address) => t.devnet.publicClient.readContract({ address: t.token, abi: BlockgateToken.abi, functionName: "balanceOf", args: [account] });
const transfer = (t: Traffic, from: Address, to: Address, amount: bigint) =>
  t.devnet.walletClient.writeContract({ address: t.token, abi: BlockgateToken.abi, functionName: "transfer", args: [to, amount], account: from, chain: null });

/** Tokens for every holder without any, once. */
async function grantTokens(t: Traffic): Promise<void> {
  const grants: Hash[] = [];
  for (const holder of t.holders.slice(1)) {
    if ((await balanceOf(t, holder)) !== 0n) continue;
    grants.push(await transfer(t, t.deployer, holder, HOLDER_GRANT));
  }
  await waitForReceipts(t.devnet, t.network, grants, "a token grant");
  if (grants.length > 0) t.log.info(`gave ${grants.length} account(s) 10,000,000 BGT each`);
}

/** Where the rounds stand: pausing while the mempool is full, and whether the node answers txpool_status. */
interface Rounds {
  stopped: boolean;
  backlogged: boolean;
  txpoolStatus: boolean;
  round: number;
}

/** Whether the mempool holds too much to add more now (said once per backlog). */
async function backlogged(t: Traffic, rounds: Rounds): Promise<boolean> {
  if (!rounds.txpoolStatus) return false;
  try {
    const { pending } = await t.devnet.testClient.getTxpoolStatus();
    if (pending > MAX_PENDING) {
      if (!rounds.backlogged) t.log.info(`${pending} transactions pending; pausing until blocks catch up`);
      rounds.backlogged = true;
      return true;
    }
    rounds.backlogged = false;
  } catch (e) {
    if (e instanceof BaseError && e.walk((x) => (x as { code?: number }).code === METHOD_NOT_FOUND)) rounds.txpoolStatus = false;
    else throw e;
  }
  return false;
}

/** One round: 1–3 transfers, each from a different holder, of at most a quarter of its balance, then an Emitter ping. */
async function sendRound(t: Traffic, rounds: Rounds): Promise<void> {
  if (await backlogged(t, rounds)) return;
  const shuffled = [...t.holders];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j] as Address, shuffled[i] as Address];
  }
  const transfers = 1 + randomInt(Math.min(3, t.holders.length - 1));
  for (const from of shuffled.slice(0, transfers)) {
    if (rounds.stopped) return;
    const others = t.holders.filter((h) => h !== from);
    const to = others[randomInt(others.length)];
    const balance = await balanceOf(t, from);
    // 0.01 to 1000 BGT.
    let amount = BigInt(1 + randomInt(100_000)) * 10n ** 16n;
    if (amount > balance / 4n) amount = balance / 4n;
    if (!to || amount === 0n) continue;
    await transfer(t, from, to, amount);
  }

  if (rounds.stopped) return;
  rounds.round += 1;
  const sender = t.holders[randomInt(t.holders.length)] ?? t.deployer;
  const note: string = `${NOTES[randomInt(NOTES.length)] ?? "ping"} from ${t.network}`;
  await t.devnet.walletClient.writeContract({
    address: t.emitter,
    abi: Emitter.abi,
    functionName: "ping",
    args: [BigInt(rounds.round), note],
    value: BigInt(1 + randomInt(1000)) * 10n ** 9n, // 1 to 1000 gwei
    account: sender,
    chain: null,
  });
}

export async function startTrafficGenerator(opts: TrafficOptions): Promise<TrafficGenerator> {
  const intervalMs = opts.intervalMs ?? 2000;
  const logger = (opts.logger ?? componentLogger("evm-devnet")).child({ network: opts.network, part: "traffic" });
  const devnet = connect(opts.rpcUrl);

  const accounts = (await devnet.walletClient.getAddresses()).map((a) => getAddress(a));
  const deployer = accounts[0];
  if (!deployer || accounts.length < 2) {
    throw new Error(`${opts.network}: the devnet has ${accounts.length} unlocked account(s); traffic needs at least 2`);
  }
  await settle(devnet, deployer);
  const { token, emitter } = await deployContracts(devnet, deployer, opts.network, logger);
  const traffic: Traffic = { devnet, network: opts.network, log: logger, deployer, holders: accounts.slice(0, HOLDERS), token, emitter };
  await grantTokens(traffic);

  // A round every intervalMs, skipped while the one before is still sending.
  const rounds: Rounds = { stopped: false, backlogged: false, txpoolStatus: true, round: 0 };
  let current: Promise<void> | null = null;
  let failing = false;
  const tick = () => {
    if (rounds.stopped || current) return;
    current = sendRound(traffic, rounds)
      .then(
        () => {
          if (failing) logger.info("recovered");
          failing = false;
        },
        (e: unknown) => {
          if (!failing) logger.warn(`${errorMessage(e)} (retrying every round; repeats not logged)`);
          failing = true;
        },
      )
      .finally(() => {
        current = null;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();

  return {
    token,
    emitter,
    holders: traffic.holders,
    async stop() {
      rounds.stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
