/**
 * The nodes of one EVM network: JSON-RPC over POST through an UpstreamPool, each node's chain id
 * checked before its first use.
 */
import type { Logger } from "@/lib/log";
import { NodeFailure, parseJson, UpstreamPool, type PoolOptions, type UpstreamResponse } from "@/lib/upstream/pool";

export { UpstreamUnavailable } from "@/lib/upstream/pool";

export const UPSTREAM_TIMEOUT_MS = 15_000;

const CHAIN_ID_REQUEST = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] });
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

/**
 * A JSON-RPC response or batch of them, as far as a pass-through needs to know. Some nodes answer
 * JSON-RPC errors with HTTP 4xx/5xx: the body, not the status, says whether the node answered.
 */
function jsonRpcAnswer(response: UpstreamResponse): unknown {
  const parsed = parseJson(response);
  if (Array.isArray(parsed)) return parsed;
  if (typeof parsed === "object" && parsed !== null) {
    const { result, error } = parsed as { result?: unknown; error?: unknown };
    if (result !== undefined || (typeof error === "object" && error !== null)) return parsed;
  }
  throw new NodeFailure(`HTTP ${response.status}, not a JSON-RPC answer`);
}

/** A node of another chain would contradict the catalog's chain id in every answer: it is left out. */
function chainCheck(chainId: number | string): NonNullable<PoolOptions["verify"]> {
  const expected = BigInt(chainId);
  return async (ask) => {
    const answer = jsonRpcAnswer(await ask({ method: "POST", headers: JSON_HEADERS, body: CHAIN_ID_REQUEST })) as { result?: unknown };
    if (typeof answer.result !== "string" || !/^0x[0-9a-fA-F]+$/.test(answer.result)) return "unknown";
    const served = BigInt(answer.result);
    return served === expected ? "ok" : { leftOut: `it serves chain ${served}, not ${chainId}` };
  };
}

export class EvmUpstream {
  private readonly pool: UpstreamPool;

  /** `chainId`: the chain the nodes must serve (unchecked when omitted, as for the local devnet). */
  constructor(urls: readonly string[], opts: { network: string; chainId?: number | string; logger?: Logger }) {
    this.pool = new UpstreamPool(urls, {
      network: opts.network,
      timeoutMs: UPSTREAM_TIMEOUT_MS,
      logger: opts.logger,
      verify: opts.chainId === undefined ? undefined : chainCheck(opts.chainId),
    });
  }

  /** POSTs a JSON-RPC body and returns the node's JSON-RPC answer, parsed. A write (`retryable: false`) is sent again only when it never left. */
  async send(body: string, opts: { retryable: boolean }): Promise<unknown> {
    return (await this.exchange(body, opts)).answer;
  }

  /** As send, with the answer's text too: a pass-through writes the node's bytes instead of serialising them again. */
  exchange(body: string, opts: { retryable: boolean }): Promise<{ answer: unknown; text: string }> {
    return this.pool.call({
      method: "POST",
      headers: JSON_HEADERS,
      body,
      retryable: opts.retryable,
      check: (response) => ({ answer: jsonRpcAnswer(response), text: response.text }),
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
