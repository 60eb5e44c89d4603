/**
 * For tests only: an Aptos fullnode stand-in on 127.0.0.1 speaking the REST API's read routes
 * the follower uses (`GET /v1`, `/v1/transactions`, `/v1/blocks/by_height/<h>`,
 * `/v1/blocks/by_version/<v>`) with the fullnode's shapes, headers and errors, serving a chain
 * made by the devnet's block builder (and, on request, the hand-written mainnet-shaped blocks of
 * fixtures.ts). Tests control it: advance(n) commits n blocks, append() one of those blocks,
 * fail() makes it answer 500 or drop connections, lag() makes its transaction pages trail its
 * ledger info (a node behind the one that answered the ledger), stop()/start() take it off and
 * back on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { buildBlock, genesisBlock, type DevnetState } from "../devnet/chain";
import { AptosApiError, blockFields, ledgerHeaders } from "../rest";
import type { LedgerInfo, TransactionJson } from "../types";
import { fixtureBlockA, fixtureBlockB } from "./fixtures";

interface ServedBlock {
  height: bigint;
  hash: string;
  firstVersion: bigint;
  lastVersion: bigint;
  timestamp: bigint;
  txs: TransactionJson[];
}

export interface AptosStandInOptions {
  chainId: number;
  /** Blocks after genesis committed before it starts serving. */
  blocks?: number;
  /** After those, the two hand-written mainnet-shaped blocks. */
  fixtures?: boolean;
  /** User transactions in the generated block at a height (default 0 to 3). */
  userTxs?: (height: bigint) => number;
  /** Blocks below this height are pruned (410). */
  oldestHeight?: bigint;
}

const GENESIS_US = 1_750_000_000_000_000n;

export class AptosStandIn {
  readonly blocks: ServedBlock[] = [];
  readonly txs: TransactionJson[] = [];
  /** Paths (with queries) of every request received, in order. */
  readonly requests: string[] = [];
  private state: DevnetState;
  private server: Server | undefined;
  private port = 0;
  private failing: false | "500" | "drop" = false;
  private lagging = 0n;

  private constructor(private readonly opts: AptosStandInOptions) {
    const genesis = genesisBlock();
    this.state = genesis.state;
    this.push({ ...genesis.block, txs: genesis.block.txs.map((t) => t.body) });
  }

  static async start(opts: AptosStandInOptions): Promise<AptosStandIn> {
    const node = new AptosStandIn(opts);
    node.advance(opts.blocks ?? 0);
    if (opts.fixtures) {
      node.append(fixtureBlockA);
      node.append(fixtureBlockB);
    }
    await node.start();
    return node;
  }

  /** The REST API's base URL (`…/v1`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get latest(): ServedBlock {
    return this.blocks.at(-1)!;
  }

  private push(b: ServedBlock): void {
    this.blocks.push(b);
    this.txs.push(...b.txs);
  }

  private next(): { height: bigint; version: bigint; timestamp: bigint } {
    const height = this.latest.height + 1n;
    return { height, version: this.latest.lastVersion + 1n, timestamp: GENESIS_US + height * 1_000_000n };
  }

  /** Commits `n` blocks made by the devnet's builder. */
  advance(n: number): void {
    for (let i = 0; i < n; i++) {
      const { height, version, timestamp } = this.next();
      const userTxs = this.opts.userTxs?.(height) ?? Number(height % 4n);
      const { block, state } = buildBlock({ chainId: this.opts.chainId }, height, version, this.state, timestamp, userTxs);
      this.state = state;
      this.push({ ...block, txs: block.txs.map((t) => t.body) });
    }
  }

  /** Commits a hand-written block (fixtures.ts) at the next height and version. */
  append(make: (height: bigint, firstVersion: bigint, timestampUs: bigint) => TransactionJson[]): void {
    const { height, version, timestamp } = this.next();
    const txs = make(height, version, timestamp);
    const first = txs[0] as { id: string };
    this.push({ height, hash: first.id, firstVersion: version, lastVersion: version + BigInt(txs.length - 1), timestamp, txs });
  }

  fail(mode: false | "500" | "drop"): void {
    this.failing = mode;
  }

  /** Transaction pages end `versions` before the ledger version that /v1 reports. */
  lag(versions: number): void {
    this.lagging = BigInt(versions);
  }

  ledger(): LedgerInfo {
    const oldest = this.blocks.find((b) => b.height === (this.opts.oldestHeight ?? 0n)) ?? this.blocks[0]!;
    return {
      chain_id: this.opts.chainId,
      epoch: "1",
      ledger_version: this.latest.lastVersion.toString(),
      oldest_ledger_version: oldest.firstVersion.toString(),
      ledger_timestamp: this.latest.timestamp.toString(),
      node_role: "full_node",
      oldest_block_height: oldest.height.toString(),
      block_height: this.latest.height.toString(),
      git_hash: "4f8d7c1fd0c2b5e3a6b9c8d7e6f5a4b3c2d1e0f9",
    };
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://stand-in");
    this.requests.push(`${url.pathname}${url.search}`);
    if (this.failing === "drop") {
      req.socket.destroy();
      return;
    }
    if (this.failing === "500") {
      res.writeHead(500, { "Content-Type": "text/plain" }).end("internal error");
      return;
    }
    const info = this.ledger();
    try {
      const body = this.route(url, info);
      res.writeHead(200, { "Content-Type": "application/json", ...ledgerHeaders(info) }).end(JSON.stringify(body));
    } catch (e) {
      if (!(e instanceof AptosApiError)) throw e;
      res.writeHead(e.status, { "Content-Type": "application/json", ...(e.withLedger ? ledgerHeaders(info) : {}) }).end(JSON.stringify(e.toJSON()));
    }
  }

  private block(b: ServedBlock, withTransactions: boolean) {
    return { ...blockFields(b), transactions: withTransactions ? b.txs : null };
  }

  private route(url: URL, info: LedgerInfo): unknown {
    const path = url.pathname.replace(/\/+$/, "");
    const ledger = BigInt(info.ledger_version);
    const oldest = BigInt(info.oldest_ledger_version);
    if (path === "/v1") return info;
    if (path === "/v1/transactions") {
      const limit = Number(url.searchParams.get("limit") ?? "25");
      if (limit === 0) throw new AptosApiError(400, "invalid_input", "Given limit value (0) must not be zero");
      if (limit > 100) throw new AptosApiError(400, "invalid_input", `Given limit value (${limit}) is too large, it must be < 100`);
      const served = ledger - this.lagging;
      const start = BigInt(url.searchParams.get("start") ?? String(served - BigInt(limit - 1)));
      if (start > served) throw new AptosApiError(400, "invalid_input", `Given start value (${start}) is higher than the current ledger version, it must be < ${served}`);
      if (start < oldest) throw new AptosApiError(410, "version_pruned", `Ledger version(${start}) has been pruned`);
      const end = start + BigInt(limit) - 1n < served ? start + BigInt(limit) - 1n : served;
      return this.txs.slice(Number(start), Number(end) + 1);
    }
    const byHeight = /^\/v1\/blocks\/by_height\/(\d+)$/.exec(path);
    const byVersion = /^\/v1\/blocks\/by_version\/(\d+)$/.exec(path);
    const withTransactions = url.searchParams.get("with_transactions") === "true";
    if (byHeight) {
      const height = BigInt(byHeight[1]!);
      if (height > this.latest.height) throw new AptosApiError(404, "block_not_found", `Block not found by Block height(${height})`);
      if (height < BigInt(info.oldest_block_height)) throw new AptosApiError(410, "block_pruned", `Block(${height}) has been pruned`);
      return this.block(this.blocks[Number(height)]!, withTransactions);
    }
    if (byVersion) {
      const version = BigInt(byVersion[1]!);
      if (version > ledger) throw new AptosApiError(404, "block_not_found", `Block not found by Ledger version(${version})`);
      if (version < oldest) throw new AptosApiError(410, "version_pruned", `Ledger version(${version}) has been pruned`);
      return this.block(this.blocks.find((b) => b.lastVersion >= version)!, withTransactions);
    }
    throw new AptosApiError(404, "web_framework_error", "not found", false);
  }
}
