/**
 * For tests only: a CometBFT node stand-in on 127.0.0.1 that speaks the real RPC protocol (URI
 * GET form, and JSON-RPC POST to "/", single or batch) with the real v0.38 shapes, serving a
 * chain built with the devnet's block builder. Tests control it: advance(n) commits n blocks,
 * fail(true) makes it answer 500 or drop connections, stop()/start() take it off and back on
 * the same port, setCatchingUp() sets what its status reports.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { INTERNAL_ERROR, METHOD_NOT_FOUND, PARSE_ERROR } from "@/lib/jsonrpc/errors";
import { buildBlock, devnetChain, validatorInfo, type DevnetChain, type PreviousBlock } from "../devnet/chain";
import { abciInfo, commitFor, consensusParams, emptyMempool, genesis, genesisChunk, netInfo, nodeInfo, validatorSet } from "../devnet/node";
import { nativeOf, type NativeBlock, type nativeResultsOf } from "../native";
import type { IngestBlock } from "../types";
import { blockResultsSchema, cometBlockSchema } from "./comet";
import { toIngestBlock } from "./convert";

type Answer = { result: unknown } | { error: { code: number; message: string; data: string } };

export interface StandInOptions {
  chainId: string;
  /** Blocks committed before it starts serving. */
  blocks?: number;
  /** Transactions in the block at a height (default: 0 to 3). */
  txsPerBlock?: (height: bigint) => number;
}

const GENESIS_TIME = Date.UTC(2025, 0, 1);

export { tagsToEvents } from "../native";

/** /block of a devnet block, in the real CometBFT shape. */
export const toCometBlock = (b: IngestBlock) => nativeOf(b).block as NativeBlock;

/** /block_results of a devnet block, in the real CometBFT v0.38 shape. */
export const toCometBlockResults = (b: IngestBlock) => nativeOf(b).results as ReturnType<typeof nativeResultsOf>;

class HeightError extends Error {}

export class CometStandIn {
  readonly chain: DevnetChain;
  private readonly blocks: IngestBlock[] = [];
  private prev: PreviousBlock | null = null;
  private readonly txsPerBlock: (height: bigint) => number;
  private readonly server: Server;
  private port = 0;
  private failing = false;
  private failures = 0;
  private catchingUp = false;
  private recorded = false;
  /** Requests answered or refused, for tests that check the node was (not) asked. */
  requests = 0;
  /** Writes and ABCI queries received, with their params as sent. */
  readonly received: Array<{ method: string; params: Record<string, unknown> }> = [];

  private constructor(opts: StandInOptions) {
    this.chain = devnetChain(`stand-in/${opts.chainId}`, opts.chainId);
    this.txsPerBlock = opts.txsPerBlock ?? ((h) => (h % 7n === 0n ? 0 : Number(h % 4n)));
    this.server = createServer((req, res) => this.handle(req, res));
    this.advance(opts.blocks ?? 0);
  }

  static async start(opts: StandInOptions): Promise<CometStandIn> {
    const node = new CometStandIn(opts);
    await node.start();
    return node;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get latestHeight(): bigint {
    return BigInt(this.blocks.length);
  }

  /** The block at a height as the devnet built it (our stored shape). */
  block(height: bigint | number): IngestBlock {
    const b = this.blocks[Number(height) - 1];
    if (!b) throw new RangeError(`stand-in has no block ${height}`);
    return b;
  }

  advance(n: number): void {
    if (this.recorded && n > 0) throw new Error("the stand-in does not build blocks after recorded ones");
    for (let i = 0; i < n; i++) {
      const height = this.latestHeight + 1n;
      const { block, next } = buildBlock(this.chain, this.prev, new Date(GENESIS_TIME + Number(height) * 1000), this.txsPerBlock(height));
      this.blocks.push(block);
      this.prev = next;
    }
  }

  /**
   * Commits a block recorded from a real node, served as recorded (/block, /block_results). It
   * should follow the chain's last block; the chain is not advanced past it.
   */
  appendRecorded(block: unknown, results: unknown): void {
    this.blocks.push(toIngestBlock(cometBlockSchema.parse(block), blockResultsSchema.parse(results), { raw: { block, results } }));
    this.recorded = true;
  }

  fail(on: boolean): void {
    this.failing = on;
  }

  setCatchingUp(on: boolean): void {
    this.catchingUp = on;
  }

  /** Listens on a free port the first time, then on the same port again. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => {
        this.server.off("error", reject);
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** Stops listening and drops open connections, as a node that goes away. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests++;
    if (this.failing) {
      if (this.failures++ % 2 === 0) {
        res.writeHead(500, { "Content-Type": "text/plain" }).end("stand-in failing on purpose");
      } else {
        req.socket.destroy();
      }
      return;
    }
    const url = new URL(req.url ?? "/", "http://stand-in");
    if (req.method === "GET") {
      const method = url.pathname.slice(1);
      const params: Record<string, unknown> = {};
      for (const [k, v] of url.searchParams) params[k] = v.replace(/^"(.*)"$/, "$1");
      const answer = this.answer(method, params);
      if (!answer) {
        res.writeHead(404, { "Content-Type": "text/plain" }).end("404 page not found\n");
        return;
      }
      // As CometBFT: errors of the URI form come with HTTP 500.
      this.send(res, "error" in answer ? 500 : 200, { jsonrpc: "2.0", id: -1, ...answer });
      return;
    }
    if (req.method !== "POST" || url.pathname !== "/") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("404 page not found\n");
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        this.send(res, 200, { jsonrpc: "2.0", id: -1, error: { code: PARSE_ERROR, message: "Parse error. Invalid JSON", data: "" } });
        return;
      }
      const one = (r: unknown) => {
        const { id = null, method, params } = (typeof r === "object" && r !== null ? r : {}) as { id?: unknown; method?: unknown; params?: unknown };
        const answer = typeof method === "string" ? this.answer(method, (params ?? {}) as Record<string, unknown>) : undefined;
        return { jsonrpc: "2.0", id, ...(answer ?? { error: { code: METHOD_NOT_FOUND, message: "Method not found", data: "" } }) };
      };
      this.send(res, 200, Array.isArray(body) ? body.map(one) : one(body));
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
  }

  private height(value: unknown): bigint {
    const latest = this.latestHeight;
    if (value === undefined || value === null || value === "") return latest;
    const text = String(value);
    if (!/^-?\d+$/.test(text)) throw new HeightError(`error converting http params to arguments: invalid height ${JSON.stringify(text)}`);
    const h = BigInt(text);
    if (h <= 0n) throw new HeightError(`height must be greater than 0, but got ${h}`);
    if (h > latest) throw new HeightError(`height ${h} must be less than or equal to the current blockchain height ${latest}`);
    return h;
  }

  /** One method's answer; undefined for a method it does not serve. */
  private answer(method: string, params: Record<string, unknown>): Answer | undefined {
    try {
      switch (method) {
        case "health":
          return { result: {} };
        case "status":
          return { result: this.status() };
        case "block":
          return { result: toCometBlock(this.block(this.height(params.height))) };
        case "block_results":
          return { result: toCometBlockResults(this.block(this.height(params.height))) };
        case "net_info":
          return { result: netInfo(this.chain) };
        case "consensus_params":
          return { result: consensusParams(this.height(params.height)) };
        case "validators": {
          const height = this.height(params.height);
          const all = validatorSet(this.chain, height);
          return { result: { block_height: height.toString(), validators: all, count: String(all.length), total: String(all.length) } };
        }
        case "commit": {
          const height = this.height(params.height);
          const b = this.block(height);
          const next = this.blocks[Number(height)];
          const commit = next ? toCometBlock(next).block.last_commit : commitFor(this.chain, height, b.result.block_id, b.result.block.header.time);
          return { result: { signed_header: { header: toCometBlock(b).block.header, commit }, canonical: next !== undefined } };
        }
        case "genesis":
          return { result: { genesis: this.genesis() } };
        case "genesis_chunked": {
          const chunk = genesisChunk(this.genesis(), Number(params.chunk ?? 0));
          return typeof chunk === "string" ? { error: { code: INTERNAL_ERROR, message: "Internal error", data: chunk } } : { result: chunk };
        }
        case "abci_info": {
          const latest = this.blocks.at(-1);
          return { result: abciInfo(this.latestHeight, latest ? toCometBlockResults(latest).app_hash : null) };
        }
        case "num_unconfirmed_txs":
          return { result: emptyMempool(null) };
        case "unconfirmed_txs":
          return { result: emptyMempool([]) };
        case "broadcast_tx_sync":
        case "broadcast_tx_async":
        case "broadcast_tx_commit":
        case "check_tx": {
          this.received.push({ method, params });
          // ResponseCheckTx and ExecTxResult are written with every field (jsonpb, EmitDefaults).
          const abci = { code: 0, data: null, log: "", info: "", gas_wanted: "1", gas_used: "1", events: [], codespace: "" };
          const hash = createHash("sha256").update(Buffer.from(String(params.tx), "base64")).digest("hex").toUpperCase();
          if (method === "check_tx") return { result: abci };
          if (method === "broadcast_tx_commit") return { result: { check_tx: abci, tx_result: abci, hash, height: this.latestHeight.toString() } };
          return { result: { code: 0, data: "", log: "", codespace: "", hash } };
        }
        case "abci_query":
          this.received.push({ method, params });
          return { result: { response: { code: 0, log: "", info: "", index: "0", key: null, value: Buffer.from(`stand-in:${String(params.path)}`).toString("base64"), proofOps: null, height: this.latestHeight.toString(), codespace: "" } } };
        default:
          return undefined;
      }
    } catch (e) {
      if (e instanceof HeightError || e instanceof RangeError) return { error: { code: INTERNAL_ERROR, message: "Internal error", data: e.message } };
      throw e;
    }
  }

  private genesis() {
    return genesis(this.chain, new Date(GENESIS_TIME + 1000).toISOString());
  }

  private status() {
    const latest = this.blocks.at(-1);
    const earliest = this.blocks[0];
    const lh = latest?.result.block.header;
    const eh = earliest?.result.block.header;
    return {
      node_info: nodeInfo(this.chain, this.chain.validators[0]!.nodeId, `stand-in-${this.chain.validators[0]!.nodeId.slice(0, 6)}`),
      sync_info: {
        latest_block_hash: latest?.result.block_id.hash ?? "",
        latest_app_hash: lh?.app_hash ?? "",
        latest_block_height: String(this.blocks.length),
        latest_block_time: lh?.time ?? "1970-01-01T00:00:00Z",
        earliest_block_hash: earliest?.result.block_id.hash ?? "",
        earliest_app_hash: eh?.app_hash ?? "",
        earliest_block_height: earliest ? "1" : "0",
        earliest_block_time: eh?.time ?? "1970-01-01T00:00:00Z",
        catching_up: this.catchingUp,
      },
      validator_info: validatorInfo(this.chain),
    };
  }
}
