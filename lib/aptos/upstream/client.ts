/**
 * A client of Aptos fullnodes' REST API (https://aptos.dev/build/apis/fullnode-rest-api) over
 * the network's upstream pool: the ledger information, pages of transactions and blocks, each
 * answer checked for the fields the follower reads.
 */
import { z } from "zod";
import type { Logger } from "@/lib/log";
import { clientPerNetwork, NodeFailure, parseJson, UpstreamPool, UpstreamUnavailable, type UpstreamResponse } from "@/lib/upstream/pool";

/** The node answered with an error of the API (`{ message, error_code }`): an answer, not a failure of the node. */
export class AptosNodeError extends Error {
  override name = "AptosNodeError";
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** No configured node answered. */
export class AptosUpstreamUnavailable extends Error {
  override name = "AptosUpstreamUnavailable";
}

const u64 = z.string().regex(/^\d{1,20}$/);

export const ledgerInfoSchema = z.looseObject({
  chain_id: z.number().int().min(0).max(255),
  epoch: u64,
  ledger_version: u64,
  oldest_ledger_version: u64,
  ledger_timestamp: u64,
  oldest_block_height: u64,
  block_height: u64,
});

const blockSchema = z.looseObject({
  block_height: u64,
  block_hash: z.string(),
  block_timestamp: u64,
  first_version: u64,
  last_version: u64,
});

const errorSchema = z.looseObject({ message: z.string(), error_code: z.string() });

/** Turns a response into its JSON value (checked by `schema`), an AptosNodeError, or a NodeFailure. */
function answer<S extends z.ZodType>(what: string, schema: S) {
  return (res: UpstreamResponse): z.output<S> => {
    if (res.status >= 500) throw new NodeFailure(`HTTP ${res.status}`);
    const body = parseJson(res);
    if (res.status < 200 || res.status > 299) {
      const error = errorSchema.safeParse(body);
      if (!error.success) throw new NodeFailure(`HTTP ${res.status} without an Aptos error body`);
      throw new AptosNodeError(res.status, error.data.error_code, error.data.message);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new NodeFailure(`malformed ${what} answer${issue ? ` at ${issue.path.join(".") || "(root)"}: ${issue.message}` : ""}`);
    }
    return parsed.data;
  };
}

/** A configured URL as the base of the REST API: `…/v1` (added when the URL does not end with it). */
export function apiBase(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  try {
    return new URL(trimmed).pathname.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
  } catch {
    return trimmed; // refused by the pool, whose error does not repeat the URL
  }
}

export interface AptosClientOptions {
  /** The catalog's chain id for this network: a node of another chain is left out. */
  chainId: number;
  network?: string;
  timeoutMs?: number;
  unhealthyMs?: number;
  now?: () => number;
  /** Parent of the pool's logger. */
  logger?: Logger;
}

export class AptosNodeClient {
  private readonly pool: UpstreamPool;

  constructor(urls: readonly string[], opts: AptosClientOptions) {
    this.pool = new UpstreamPool(urls.map(apiBase), {
      network: opts.network ?? "aptos",
      timeoutMs: opts.timeoutMs,
      unhealthyMs: opts.unhealthyMs,
      now: opts.now,
      logger: opts.logger,
      async verify(ask) {
        const info = ledgerInfoSchema.safeParse(parseJson(await ask({ method: "GET", headers: { accept: "application/json" } })));
        if (!info.success) return "unknown";
        return info.data.chain_id === opts.chainId ? "ok" : { leftOut: `it serves chain id ${info.data.chain_id}, not ${opts.chainId}` };
      },
    });
  }

  /** The nodes, by origin only (safe to log), numbered when there are several. */
  get labels(): string[] {
    return this.pool.labels();
  }

  private async get<S extends z.ZodType>(what: string, path: string | undefined, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    try {
      return await this.pool.call({ method: "GET", path, headers: { accept: "application/json" }, retryable: true, signal, check: answer(what, schema) });
    } catch (e) {
      if (e instanceof UpstreamUnavailable) throw new AptosUpstreamUnavailable(`${what}: ${e.message}`);
      throw e;
    }
  }

  ledgerInfo(signal?: AbortSignal): Promise<z.output<typeof ledgerInfoSchema>> {
    return this.get("ledger info", undefined, ledgerInfoSchema, signal);
  }

  /** Up to `limit` (at most 100) transactions from version `start`, as the node wrote them. */
  transactions(start: bigint, limit: number, signal?: AbortSignal): Promise<unknown[]> {
    return this.get("transactions", `transactions?start=${start}&limit=${limit}`, z.array(z.unknown()), signal);
  }

  /** A block's header (without its transactions). */
  blockByHeight(height: bigint, signal?: AbortSignal): Promise<z.output<typeof blockSchema>> {
    return this.get("block", `blocks/by_height/${height}`, blockSchema, signal);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The client of a network's upstream nodes, one per process (every caller shares its health marks). */
export const aptosUpstreamClient = clientPerNetwork((network, urls) => new AptosNodeClient(urls, { chainId: Number(network.chainId), network: network.slug }));
