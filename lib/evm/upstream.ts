/**
 * The nodes of one EVM network: JSON-RPC over POST through an UpstreamPool, each node's chain id
 * checked before its first use. Single calls that reach it in the same turn of the event loop go
 * to the node together, as one JSON-RPC batch (see `call`).
 */
import { objectItems, objectSpan } from "@/lib/jsonrpc/scan";
import { componentLogger, type Logger } from "@/lib/log";
import { activeContext, linksToContexts, tracingOn, type Context } from "@/lib/tracing";
import { NodeFailure, parseJson, UpstreamPool, UpstreamUnavailable, type PoolOptions, type UpstreamRequest, type UpstreamResponse } from "@/lib/upstream/pool";

export { UpstreamUnavailable };

export const UPSTREAM_TIMEOUT_MS = 15_000;
/** After a node refused a batch, single calls go to it one by one for this long. */
const BATCH_REFUSED_FOR_MS = 10 * 60_000;

const CHAIN_ID_REQUEST = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] });
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };
const CHAIN_ID_TRACE = { attributes: { "rpc.system.name": "jsonrpc", "rpc.method": "eth_chainId" } };

/**
 * A JSON-RPC response or batch of them, as far as a pass-through needs to know. Some nodes answer
 * JSON-RPC errors with HTTP 4xx/5xx: the body, not the status, says whether the node answered.
 */
function jsonRpcAnswer(response: UpstreamResponse): unknown {
  const parsed = parseJson(response);
  if (Array.isArray(parsed)) return parsed;
  if (isAnswerObject(parsed)) return parsed;
  throw new NodeFailure(`HTTP ${response.status}, not a JSON-RPC answer`);
}

function isAnswerObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { result, error } = value as { result?: unknown; error?: unknown };
  return result !== undefined || (typeof error === "object" && error !== null);
}

const PLAIN_PREFIX = '{"jsonrpc":"2.0","id":';
const RESULT_MEMBER = ',"result":';

/**
 * One JSON-RPC answer of a node, kept as the text the node wrote. Most nodes (geth, anvil, erigon,
 * reth) write a result as `{"jsonrpc":"2.0","id":<number>,"result":…}`: such an answer is passed
 * to the caller with the caller's id spliced in, never parsed; any other is parsed when asked.
 */
export class NodeAnswer {
  private parsed: Record<string, unknown> | undefined;
  /** Where the id's digits end when the answer is a plain result; -1 otherwise. */
  private readonly idEnd: number;
  /** The id the node wrote, when it is a plain result. */
  readonly plainId: number | undefined;

  constructor(readonly text: string, parsed?: Record<string, unknown>) {
    this.parsed = parsed;
    this.idEnd = -1;
    if (parsed === undefined && text.startsWith(PLAIN_PREFIX)) {
      let i = PLAIN_PREFIX.length;
      while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
      if (i > PLAIN_PREFIX.length && i - PLAIN_PREFIX.length < 16 && text.startsWith(RESULT_MEMBER, i)) {
        this.idEnd = i;
        this.plainId = Number(text.slice(PLAIN_PREFIX.length, i));
      }
    }
  }

  /** A result, not an error, written in the plain form: `withId` can pass it on. */
  get plain(): boolean {
    return this.idEnd !== -1;
  }

  /** The plain answer's text with `idText` (JSON) as its id. */
  withId(idText: string): string {
    return PLAIN_PREFIX + idText + this.text.slice(this.idEnd);
  }

  /** The answer as an object (parsed once); undefined when the node's text is not one. */
  value(): Record<string, unknown> | undefined {
    if (this.parsed === undefined) {
      try {
        const v = JSON.parse(this.text) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v)) this.parsed = v as Record<string, unknown>;
      } catch {
        return undefined;
      }
    }
    return this.parsed;
  }

  /** The id the node gave this answer, when it is a number. */
  id(): number | undefined {
    if (this.plainId !== undefined) return this.plainId;
    const id = this.value()?.id;
    return typeof id === "number" ? id : undefined;
  }
}

/**
 * What a node answered to a request carrying our ids 0…n−1: `byId[i]` answers call i (undefined
 * when the node left it out). `whole`: a batch was answered by one object (a node that does not
 * take batches, or could not parse this one, answers one error without an id).
 */
export type Reply = { byId: Array<NodeAnswer | undefined> } | { whole: NodeAnswer } | { refused: string };

/**
 * `refusable`: a batch answered with no JSON-RPC answer at all (an HTTP error page, plain text)
 * is a node that does not take batches, not a failing node: `{ refused }`, and the node stays
 * healthy (its calls can go alone).
 */
function readReply(response: UpstreamResponse, calls: number, batch: boolean, refusable: boolean): Reply {
  const text = response.text;
  if (batch) {
    const items = objectItems(text);
    if (items) return { byId: byOurIds(items.map(([start, end]) => new NodeAnswer(text.slice(start, end))), calls) };
  } else {
    const span = objectSpan(text);
    if (span) {
      const answer = new NodeAnswer(text.slice(span[0], span[1]));
      if (answer.plain) return { byId: [answer] };
    }
  }
  // Not of the shapes above: parsed, so that what is no JSON-RPC answer at all fails the node.
  let parsed: unknown;
  try {
    parsed = jsonRpcAnswer(response);
  } catch (e) {
    if (batch && refusable && e instanceof NodeFailure) return { refused: e.message };
    throw e;
  }
  if (Array.isArray(parsed)) {
    // An array where one object was expected, or items that are not all objects.
    const objects = parsed.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null && !Array.isArray(item));
    return { byId: byOurIds(objects.map((item) => new NodeAnswer(JSON.stringify(item), item)), calls) };
  }
  const answer = new NodeAnswer(text, parsed as Record<string, unknown>);
  return batch ? { whole: answer } : { byId: [answer] };
}

/** The answers placed by the ids we gave the calls (0…calls−1); others are left out. */
function byOurIds(answers: readonly NodeAnswer[], calls: number): Array<NodeAnswer | undefined> {
  const byId = new Array<NodeAnswer | undefined>(calls).fill(undefined);
  for (const answer of answers) {
    const id = answer.id();
    if (id !== undefined && Number.isInteger(id) && id >= 0 && id < calls) byId[id] = answer;
  }
  return byId;
}

/** A node of another chain would contradict the catalog's chain id in every answer: it is left out. */
function chainCheck(chainId: number | string): NonNullable<PoolOptions["verify"]> {
  const expected = BigInt(chainId);
  return async (ask) => {
    const answer = jsonRpcAnswer(await ask({ method: "POST", headers: JSON_HEADERS, body: CHAIN_ID_REQUEST, trace: CHAIN_ID_TRACE })) as { result?: unknown };
    if (typeof answer.result !== "string" || !/^0x[0-9a-fA-F]+$/.test(answer.result)) return "unknown";
    const served = BigInt(answer.result);
    return served === expected ? "ok" : { leftOut: `it serves chain ${served}, not ${chainId}` };
  };
}

export interface Call {
  method: string;
  params: unknown;
  /** The caller's trace, when it is not the active one (a single read sent in a batch with others'; tracing on). */
  context?: Context;
}

interface Waiting extends Call {
  resolve: (answer: NodeAnswer | undefined) => void;
  reject: (e: unknown) => void;
}

/**
 * What the client span of a request carrying `calls` says of them: the JSON-RPC methods in the
 * order sent (a batch's members), and links to the traces of the callers they came from.
 */
function rpcTrace(calls: readonly Call[]): UpstreamRequest["trace"] {
  return {
    attributes: {
      "rpc.system.name": "jsonrpc",
      ...(calls.length === 1 ? { "rpc.method": calls[0]!.method } : {}),
      "blockgate.rpc.methods": calls.map((c) => c.method),
      "blockgate.rpc.batch_size": calls.length,
    },
    links: linksToContexts(calls.map((c) => c.context)),
  };
}

export class EvmUpstream {
  private readonly pool: UpstreamPool;
  private readonly log: Logger;
  private readonly batchMax: number;
  private waiting: Waiting[] = [];
  /** Requests of `call` on their way to the node. */
  private inFlight = 0;
  private batchRefusedUntil = 0;
  private readonly onUnavailable?: () => void;

  /**
   * `chainId`: the chain the nodes must serve (unchecked when omitted, as for the local devnet).
   * `batchMax`: most single calls sent to a node together in one batch (1: each alone).
   * `onUnavailable`: called when no node gave an answer (a devnet's URL may have moved).
   */
  constructor(urls: readonly string[], opts: { network: string; chainId?: number | string; logger?: Logger; batchMax?: number; onUnavailable?: () => void }) {
    this.log = (opts.logger ?? componentLogger("upstream")).child({ network: opts.network });
    this.batchMax = opts.batchMax ?? 1;
    this.onUnavailable = opts.onUnavailable;
    this.pool = new UpstreamPool(urls, {
      network: opts.network,
      timeoutMs: UPSTREAM_TIMEOUT_MS,
      logger: opts.logger,
      verify: opts.chainId === undefined ? undefined : chainCheck(opts.chainId),
    });
  }

  /**
   * POSTs a JSON-RPC body and returns the node's JSON-RPC answer, parsed. A write (`retryable: false`)
   * is sent again only when it never left. `method`: the body's, for its trace.
   */
  async send(body: string, opts: { retryable: boolean; method?: string }): Promise<unknown> {
    return this.post(body, opts.retryable, jsonRpcAnswer, tracingOn() && opts.method !== undefined ? rpcTrace([{ method: opts.method, params: undefined }]) : undefined);
  }

  private async post<T>(body: string, retryable: boolean, check: (response: UpstreamResponse) => T, trace?: UpstreamRequest["trace"]): Promise<T> {
    try {
      return await this.pool.call({ method: "POST", headers: JSON_HEADERS, body, retryable, check, trace });
    } catch (e) {
      if (e instanceof UpstreamUnavailable) this.onUnavailable?.();
      throw e;
    }
  }

  /**
   * Sends `calls` in one request (one object for one call, a batch for several) with our ids
   * 0…n−1, and returns the node's answers by those ids.
   */
  exchange(calls: readonly Call[], opts: { retryable: boolean; refusable?: boolean }): Promise<Reply> {
    const batch = calls.length > 1;
    const requests = calls.map((c, i) => ({ jsonrpc: "2.0", id: i, method: c.method, params: c.params }));
    const body = JSON.stringify(batch ? requests : requests[0]);
    return this.post(body, opts.retryable, (response) => readReply(response, calls.length, batch, opts.refusable ?? false), tracingOn() ? rpcTrace(calls) : undefined);
  }

  /**
   * One read. While other calls are on their way to the node, it waits for the end of this turn of
   * the event loop and goes with the other single reads made meanwhile, as one batch of at most
   * `batchMax` (a busy gateway then sends one request upstream for many, and writes and parses
   * less); otherwise (an idle gateway, a lone caller) it goes at once. Its answer, or undefined
   * when the node left it out of the batch. A node that does not take a batch (one error object
   * for an answer, or no JSON-RPC answer at all, such as an HTTP error page) is sent each call
   * alone, and every call goes alone for BATCH_REFUSED_FOR_MS. A node that gives no answer (down,
   * timed out) fails the calls as it would fail each.
   */
  call(method: string, params: unknown): Promise<NodeAnswer | undefined> {
    if (this.batchMax <= 1 || (this.inFlight === 0 && this.waiting.length === 0) || performance.now() < this.batchRefusedUntil) return this.alone({ method, params });
    return new Promise((resolve, reject) => {
      if (this.waiting.push({ method, params, resolve, reject, context: activeContext() }) === 1) setImmediate(() => this.sendWaiting());
    });
  }

  private async alone(call: Call): Promise<NodeAnswer | undefined> {
    this.inFlight++;
    try {
      const reply = await this.exchange([call], { retryable: true });
      return "byId" in reply ? reply.byId[0] : "whole" in reply ? reply.whole : undefined;
    } finally {
      this.inFlight--;
    }
  }

  private sendWaiting(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i += this.batchMax) void this.sendGroup(waiting.slice(i, i + this.batchMax));
  }

  private async sendGroup(group: Waiting[]): Promise<void> {
    try {
      if (group.length === 1) {
        group[0]!.resolve(await this.alone(group[0]!));
        return;
      }
      this.inFlight++;
      let reply: Reply;
      try {
        reply = await this.exchange(group, { retryable: true, refusable: true });
      } finally {
        this.inFlight--;
      }
      if ("byId" in reply) {
        group.forEach((w, i) => w.resolve(reply.byId[i]));
        return;
      }
      // The node does not take batches: one error object for the whole, or no JSON-RPC answer.
      const error = "whole" in reply ? (reply.whole.value()?.error as { message?: unknown } | undefined) : undefined;
      this.refuseBatches(group.length, "refused" in reply ? reply.refused : typeof error?.message === "string" ? error.message.slice(0, 200) : "one object");
      await Promise.all(group.map((w) => this.alone(w).then(w.resolve, w.reject)));
    } catch (e) {
      for (const w of group) w.reject(e);
    }
  }

  /** No batch for BATCH_REFUSED_FOR_MS (said once per period). */
  private refuseBatches(calls: number, answer: string): void {
    if (performance.now() >= this.batchRefusedUntil) {
      this.log.warn({ answer }, `the node did not take a batch of ${calls} calls: they go to it one by one, and every call alone for ${BATCH_REFUSED_FOR_MS / 60_000} minutes`);
    }
    this.batchRefusedUntil = performance.now() + BATCH_REFUSED_FOR_MS;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
