import type { ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { killTied, spawnTied, stopLeftover } from "@/lib/process/children";
import type { Network } from "@/lib/networks";

/** Path of the anvil binary shipped by the npm package for this platform. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  } catch {
    throw new Error(`anvil is not installed for ${process.platform}-${arch} (npm package ${pkg}); run npm install`);
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, host, () => {
      const a = srv.address();
      srv.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

export interface DevnetStarted {
  network: Network;
  url: string;
}

export interface AnvilOptions {
  /** Where each network's state lives: `<dataDir>/<slug>/state.json`. */
  dataDir: string;
  blockTimeSec: number;
  /** Stop a devnet nobody used for this long. */
  idleMs: number;
  /** Default: the "evm-devnet" component logger. Lines carry the network. */
  logger?: Logger;
  /** Called after each (re)start, for example to start the traffic generator. */
  onStarted?: (started: DevnetStarted) => Promise<(() => Promise<void>) | void>;
}

interface Instance {
  network: Network;
  child?: ChildProcess;
  url?: string;
  starting?: Promise<string>;
  lastUsed: number;
  stopping: boolean;
  restarts: number;
  cleanup?: () => Promise<void>;
}

/**
 * Runs one anvil per EVM network on demand, on loopback and a free port, with the network's
 * devnet chain id and its state kept on disk. Restarts a crashed anvil, stops idle ones, and
 * stops all at shutdown (anvil writes its state on the way out).
 */
export class AnvilSupervisor {
  private instances = new Map<string, Instance>();
  private idleTimer: NodeJS.Timeout;
  private closed = false;
  private readonly log: Logger;

  constructor(private readonly opts: AnvilOptions) {
    this.log = opts.logger ?? componentLogger("evm-devnet");
    this.idleTimer = setInterval(() => void this.stopIdle(), Math.min(60_000, Math.max(1000, opts.idleMs / 4)));
    this.idleTimer.unref();
  }

  /** The URL of the network's devnet, starting it first when needed. */
  url(network: Network): Promise<string> {
    let inst = this.instances.get(network.slug);
    if (!inst) {
      inst = { network, lastUsed: performance.now(), stopping: false, restarts: 0 };
      this.instances.set(network.slug, inst);
    }
    inst.lastUsed = performance.now();
    if (inst.url && inst.child && inst.child.exitCode === null) return Promise.resolve(inst.url);
    inst.starting ??= this.start(inst).finally(() => {
      if (inst) inst.starting = undefined;
    });
    return inst.starting;
  }

  running(): string[] {
    return [...this.instances.values()].filter((i) => i.url && i.child?.exitCode === null).map((i) => i.network.slug);
  }

  private async start(inst: Instance): Promise<string> {
    if (this.closed) throw new Error("the devnet supervisor is shut down");
    const anvil = await startAnvil({
      network: inst.network,
      dir: path.resolve(this.opts.dataDir, inst.network.slug),
      blockTimeSec: this.opts.blockTimeSec,
      logger: this.log,
    });
    const child = anvil.child;
    inst.child = child;
    inst.stopping = false;
    child.on("exit", (code, signal) => {
      if (inst.child !== child) return;
      inst.url = undefined;
      if (inst.stopping || this.closed) return;
      inst.restarts += 1;
      const delay = Math.min(30_000, 500 * 2 ** Math.min(inst.restarts, 6));
      this.log.warn({ network: inst.network.slug }, `anvil exited (${signal ?? `code ${code}`})${anvil.lastError() ? `: ${anvil.lastError()}` : ""}; restarting in ${delay} ms`);
      void inst.cleanup?.().catch(() => undefined);
      inst.cleanup = undefined;
      setTimeout(() => {
        if (!this.closed && !inst.stopping) void this.url(inst.network).catch((e: unknown) => this.log.error({ network: inst.network.slug }, `restart failed: ${errorMessage(e)}`));
      }, delay).unref();
    });
    inst.url = anvil.url;
    inst.restarts = 0;
    if (this.opts.onStarted) {
      try {
        inst.cleanup = (await this.opts.onStarted({ network: inst.network, url: anvil.url })) ?? undefined;
      } catch (e) {
        this.log.error({ network: inst.network.slug }, `devnet start-up hook failed: ${errorMessage(e)}`);
      }
    }
    return anvil.url;
  }

  private async stopInstance(inst: Instance): Promise<void> {
    inst.stopping = true;
    await inst.cleanup?.().catch(() => undefined);
    inst.cleanup = undefined;
    inst.url = undefined;
    if (inst.child) await stopChild(inst.child);
  }

  private async stopIdle(): Promise<void> {
    const now = performance.now();
    for (const inst of this.instances.values()) {
      if (inst.url && !inst.stopping && now - inst.lastUsed > this.opts.idleMs) {
        this.log.info({ network: inst.network.slug }, `idle for ${Math.round((now - inst.lastUsed) / 1000)} s; stopping its devnet`);
        await this.stopInstance(inst);
      }
    }
  }

  async stopAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleTimer);
    await Promise.all([...this.instances.values()].map((i) => this.stopInstance(i)));
  }
}

/** Whether an anvil answers eth_chainId at `url` within `timeoutMs`. */
export async function answersRpc(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

async function waitForRpc(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`anvil exited during start-up: ${stderr().trim() || `code ${child.exitCode}`}`);
    if (await answersRpc(url, 1000)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  killTied(child);
  throw new Error("anvil did not answer within 30 s");
}

/** SIGTERM (anvil writes a `--state` file on the way out), SIGKILL after 5 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const kill = setTimeout(() => killTied(child), 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export interface AnvilStartOptions {
  network: Network;
  /** Holds `state.json` (anvil loads it, and writes it back every 30 s and at exit) and `anvil.pid`. */
  dir: string;
  blockTimeSec: number;
  /** Where it listens (default 127.0.0.1), and the host name in its URL (default: that address). */
  host?: string;
  advertiseHost?: string;
  /** The newest blocks whose transactions and receipts it keeps (--transaction-block-keeper); 0 or unset: all. */
  retainBlocks?: number;
  logger: Logger;
}

export interface Anvil {
  url: string;
  child: ChildProcess;
  /** The last line anvil wrote to stderr, if any. */
  lastError(): string | undefined;
  /** Its state now (anvil_dumpState: gzipped JSON with its accounts, blocks and transactions). */
  dumpState(): Promise<Buffer>;
  blockNumber(): Promise<number>;
  /** Stops (0) or sets its interval mining (evm_setIntervalMining). */
  setIntervalMining(seconds: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts one anvil with the network's devnet chain id on a free port, once it answers. Tied to
 * this process: it stops when we die, however we die. One anvil per state file: one an earlier
 * start left running on it (killed too hard to stop its children) is stopped first.
 */
export async function startAnvil(o: AnvilStartOptions): Promise<Anvil> {
  mkdirSync(o.dir, { recursive: true });
  const statePath = path.join(o.dir, "state.json");
  const pidFile = path.join(o.dir, "anvil.pid");
  // SIGTERM makes a leftover write the state this start then loads.
  const leftover = await stopLeftover(pidFile, (command) => command.includes("anvil") && command.includes(statePath));
  if (leftover !== null) o.logger.warn({ network: o.network.slug }, `stopped an anvil left running by an earlier start (pid ${leftover}) on ${statePath}`);
  const host = o.host ?? "127.0.0.1";
  const port = await freePort(host);
  const args = ["--host", host, "--port", String(port), "--chain-id", String(o.network.devnetChainId), "--block-time", String(o.blockTimeSec), "--state", statePath, "--state-interval", "30", "--silent"];
  if (o.retainBlocks) args.push("--transaction-block-keeper", String(o.retainBlocks));
  const child = spawnTied(anvilBinary(), args, { pidFile, deathSignal: "TERM" });
  child.stdout?.resume();
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const advertised = o.advertiseHost ?? host;
  const url = `http://${advertised.includes(":") ? `[${advertised}]` : advertised}:${port}`;
  // Asked on the address it listens on: the advertised name may not resolve here.
  const local = `http://${host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  await waitForRpc(local, child, () => stderr);
  o.logger.info({ network: o.network.slug }, `anvil devnet on ${url} (chain id ${o.network.devnetChainId})`);
  return {
    url,
    child,
    lastError: () => stderr.trim().split("\n").at(-1) || undefined,
    async dumpState() {
      const hex = await rpc<string>(local, "anvil_dumpState");
      return Buffer.from(hex.replace(/^0x/, ""), "hex");
    },
    async blockNumber() {
      return Number(await rpc<string>(local, "eth_blockNumber"));
    },
    async setIntervalMining(seconds) {
      await rpc<null>(local, "evm_setIntervalMining", [seconds]);
    },
    stop: () => stopChild(child),
  };
}

/** anvil's state as anvil_dumpState writes it (the parts trimState reads; the rest is kept as it is). */
interface DumpedState {
  best_block_number: number | string;
  blocks?: Array<{ header: { number: string | number } }>;
  transactions?: Array<{ block_number: string | number }>;
}

/**
 * A dumped state (gzipped JSON) with only the newest `keep` blocks and their transactions: anvil
 * started from it answers as a pruned node (an older block is null), and goes on from its head.
 */
export async function trimState(dump: Buffer, keep: number): Promise<{ state: Buffer; blocks: number }> {
  const state = JSON.parse((await promisify(gunzip)(dump)).toString("utf8")) as DumpedState;
  const oldest = Number(state.best_block_number) - keep + 1;
  state.blocks = (state.blocks ?? []).filter((b) => Number(b.header.number) >= oldest);
  state.transactions = (state.transactions ?? []).filter((t) => Number(t.block_number) >= oldest);
  return { state: await promisify(gzip)(JSON.stringify(state)), blocks: state.blocks.length };
}

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  const answer = (await res.json()) as { result?: T; error?: { message?: string } };
  if (answer.result === undefined) throw new Error(`anvil ${method}: ${answer.error?.message ?? `HTTP ${res.status}`}`);
  return answer.result;
}
