import { CONSENSUS_ENDPOINTS, PER_PAGE_DEFAULT, PER_PAGE_MAX, type ConsensusMethod, type ParamSpec } from "./catalog";
import { parseQuery } from "./query/parse";
import type { Query } from "./query/parse";
import { invalidParams, RpcError } from "./rpc-error";

/** Parameters as they arrive: query-string values, or named JSON-RPC params turned into strings. */
export type RawParams = Record<string, string | undefined>;

export interface ParsedParams {
  height?: bigint;
  query?: Query;
  page: number;
  perPage: number;
  order?: "asc" | "desc";
  prove: boolean;
  hash?: string;
}

/** CometBFT's URI form quotes strings (`query="tx.height=5"`); plain values are accepted too. */
export function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

const show = (v: string) => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);

function positiveInteger(spec: ParamSpec, v: string): bigint {
  if (!/^\d{1,19}$/.test(v)) throw invalidParams(`${spec.name} must be a non-negative integer, got ${show(v)}`);
  return BigInt(v);
}

/** Validates and normalises the parameters of one method from its catalog entry. */
export function parseParams(method: ConsensusMethod, raw: RawParams): ParsedParams {
  const out: ParsedParams = { page: 1, perPage: PER_PAGE_DEFAULT, prove: false };
  for (const spec of CONSENSUS_ENDPOINTS[method].params) {
    const given = raw[spec.name];
    const value = given === undefined ? undefined : unquote(given.trim());
    if (value === undefined || value === "") {
      if (spec.required) throw invalidParams(`${spec.name} is required`);
      continue;
    }
    switch (spec.type) {
      case "height":
        out.height = positiveInteger(spec, value);
        break;
      case "int": {
        const n = positiveInteger(spec, value);
        if (spec.name === "per_page") {
          // CometBFT: below 1 means the default, above the maximum clamps to it.
          out.perPage = n < 1n ? PER_PAGE_DEFAULT : n > BigInt(PER_PAGE_MAX) ? PER_PAGE_MAX : Number(n);
        } else {
          out.page = n > 1_000_000_000n ? 1_000_000_000 : Number(n);
        }
        break;
      }
      case "bool":
        if (value !== "true" && value !== "false") throw invalidParams(`${spec.name} must be true or false, got ${show(value)}`);
        out.prove = value === "true";
        break;
      case "order":
        if (value !== "asc" && value !== "desc") throw invalidParams(`order_by must be "asc" or "desc", got ${show(value)}`);
        out.order = value;
        break;
      case "hash": {
        const hex = value.replace(/^0x/i, "");
        if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw invalidParams(`hash must be 64 hexadecimal characters (32 bytes), optionally with 0x, got ${show(value)}`);
        out.hash = hex.toUpperCase();
        break;
      }
      case "query": {
        // The parser refuses a query over MAX_QUERY_LENGTH before reading it.
        const parsed = parseQuery(value);
        if (!parsed.ok) throw new RpcError(-32603, `Invalid query: ${parsed.error.message}`, parsed.error.message);
        out.query = parsed.query;
        break;
      }
    }
  }
  return out;
}
