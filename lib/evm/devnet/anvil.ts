import type { ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
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
    const dir = path.resolve(this.opts.dataDir, inst.network.slug);
    mkdirSync(dir, { recursive: true });
    const statePath = path.join(dir, "state.json");
    const pidFile = path.join(dir, "anvil.pid");
    // One anvil per state file: one left running by an earlier start (killed too hard to stop its
    // children) is stopped first; SIGTERM makes it write the state this start then loads.
    const leftover = await stopLeftover(pidFile, (command) => command.includes("anvil") && command.includes(statePath));
    if (leftover !== null) this.log.warn({ network: inst.network.slug }, `stopped an anvil left running by an earlier start (pid ${leftover}) on ${statePath}`);
    const port = await freePort();
    const args = [
      "--host", "127.0.0.1",
      "--port", String(port),
      "--chain-id", String(inst.network.devnetChainId),
      "--block-time", String(this.opts.blockTimeSec),
      "--state", statePath,
      "--state-interval", "30",
      "--silent",
    ];
    // Tied to this process: it stops when we die, however we die.
    const child = spawnTied(anvilBinary(), args, { pidFile, deathSignal: "TERM" });
    child.stdout?.resume();
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    inst.child = child;
    inst.stopping = false;
    const url = `http://127.0.0.1:${port}`;
    child.on("exit", (code, signal) => {
      if (inst.child !== child) return;
      inst.url = undefined;
      if (inst.stopping || this.closed) return;
      inst.restarts += 1;
      const delay = Math.min(30_000, 500 * 2 ** Math.min(inst.restarts, 6));
      this.log.warn({ network: inst.network.slug }, `anvil exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim().split("\n").at(-1)}` : ""}; restarting in ${delay} ms`);
      void inst.cleanup?.().catch(() => undefined);
      inst.cleanup = undefined;
      setTimeout(() => {
        if (!this.closed && !inst.stopping) void this.url(inst.network).catch((e: unknown) => this.log.error({ network: inst.network.slug }, `restart failed: ${errorMessage(e)}`));
      }, delay).unref();
    });
    await waitForRpc(url, child, () => stderr);
    inst.url = url;
    inst.restarts = 0;
    this.log.info({ network: inst.network.slug }, `anvil devnet on ${url} (chain id ${inst.network.devnetChainId})`);
    if (this.opts.onStarted) {
      try {
        inst.cleanup = (await this.opts.onStarted({ network: inst.network, url })) ?? undefined;
      } catch (e) {
        this.log.error({ network: inst.network.slug }, `devnet start-up hook failed: ${errorMessage(e)}`);
      }
    }
    return url;
  }

  private async stopInstance(inst: Instance): Promise<void> {
    inst.stopping = true;
    await inst.cleanup?.().catch(() => undefined);
    inst.cleanup = undefined;
    const child = inst.child;
    inst.url = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => killTied(child), 5000);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill("SIGTERM");
    });
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

async function waitForRpc(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`anvil exited during start-up: ${stderr().trim() || `code ${child.exitCode}`}`);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        signal: AbortSignal.timeout(1000),
      });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  killTied(child);
  throw new Error("anvil did not answer within 30 s");
}
