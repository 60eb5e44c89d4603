// The console's playground checks its form with checkParam in the browser: keep this module's
// imports free of Node-only modules (it reads the catalog, the query parser and lib/jsonrpc/errors).
import { CONSENSUS_ENDPOINTS, PER_PAGE_DEFAULT, PER_PAGE_MAX, type ConsensusMethod, type ParamSpec } from "./catalog";
import { parseQuery } from "./query/parse";
import type { Query, QueryError } from "./query/parse";
import { INTERNAL_ERROR, invalidParams, RpcError } from "@/lib/jsonrpc/errors";

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

/**
 * The text the endpoint reads from a value as given (trimmed, then unquoted), and where that text
 * starts in the value: a query's error offsets count from there.
 */
export function paramText(given: string): { text: string; start: number } {
  const trimmed = given.trim();
  const text = unquote(trimmed);
  return { text, start: given.length - given.trimStart().length + (text === trimmed ? 0 : 1) };
}

/** A value read by its catalog type; hashes are upper-case hex without 0x. */
export type ParamValue =
  | { type: "height" | "int"; value: bigint }
  | { type: "bool"; value: boolean }
  | { type: "order"; value: "asc" | "desc" }
  | { type: "hash"; value: string }
  | { type: "query"; value: Query };

/**
 * The verdict on one parameter. Messages name the parameter and end without a full stop, so that
 * they read as the detail of a JSON-RPC error and, with one, as a form's error text.
 */
export type ParamCheck =
  /** Nothing given for an optional parameter: the default applies. */
  | { kind: "absent" }
  /** Nothing given for a required one. */
  | { kind: "missing"; message: string }
  /** `queryError` is set for a query, with offsets into the text the endpoint read (see paramText). */
  | { kind: "invalid"; message: string; queryError?: QueryError }
  /**
   * `outside` is set for an integer outside the catalog's range. CometBFT takes such a value
   * anyway (height 0 and page 0 reach the handlers, which answer with CometBFT's own errors;
   * per_page falls back to the default or is clamped), so the endpoint does too; a form should not
   * send it.
   */
  | { kind: "valid"; value: ParamValue; outside?: string };

/** Heights and counts are int64 in CometBFT. */
const INT64_MAX = 9223372036854775807n;
/** A transaction hash: 32 bytes. */
export const HASH_HEX_DIGITS = 64;

function checkInteger(spec: ParamSpec, v: string): ParamCheck {
  if (!/^\d+$/.test(v)) return { kind: "invalid", message: `${spec.name} must be a whole number, such as 5` };
  const n = BigInt(v);
  if (n > INT64_MAX) return { kind: "invalid", message: `${spec.name} is too large: the maximum is ${INT64_MAX}` };
  const value: ParamValue = { type: spec.type === "height" ? "height" : "int", value: n };
  if (n < 1n) return { kind: "valid", value, outside: `${spec.name} starts at 1` };
  if (spec.max !== undefined && n > BigInt(spec.max)) return { kind: "valid", value, outside: `${spec.name} is at most ${spec.max}` };
  return { kind: "valid", value };
}

function checkHash(spec: ParamSpec, v: string): ParamCheck {
  const hex = v.replace(/^0x/i, "");
  const rule = `${spec.name} must be ${HASH_HEX_DIGITS} hexadecimal characters (32 bytes), optionally after 0x`;
  const bad = /[^0-9a-fA-F]/u.exec(hex);
  if (bad) return { kind: "invalid", message: `${rule}; ${JSON.stringify(bad[0])} is not a hex digit` };
  if (hex.length !== HASH_HEX_DIGITS) return { kind: "invalid", message: `${rule}; this one has ${hex.length}` };
  return { kind: "valid", value: { type: "hash", value: hex.toUpperCase() } };
}

/**
 * Checks one parameter as given (undefined when not given at all) against its catalog entry: the
 * rules parseParams applies, for any caller that wants to know before sending.
 */
export function checkParam(spec: ParamSpec, given: string | undefined): ParamCheck {
  const v = given === undefined ? "" : paramText(given).text;
  if (v === "") return spec.required ? { kind: "missing", message: `${spec.name} is required` } : { kind: "absent" };
  switch (spec.type) {
    case "height":
    case "int":
      return checkInteger(spec, v);
    case "hash":
      return checkHash(spec, v);
    case "bool":
      return v === "true" || v === "false" ? { kind: "valid", value: { type: "bool", value: v === "true" } } : { kind: "invalid", message: `${spec.name} must be true or false` };
    case "order":
      return v === "asc" || v === "desc" ? { kind: "valid", value: { type: "order", value: v } } : { kind: "invalid", message: `${spec.name} must be asc or desc` };
    case "query": {
      // The parser also refuses a query over MAX_QUERY_LENGTH, at that offset.
      const parsed = parseQuery(v);
      return parsed.ok ? { kind: "valid", value: { type: "query", value: parsed.query } } : { kind: "invalid", message: parsed.error.message, queryError: parsed.error };
    }
  }
}

const show = (v: string) => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);

/** Validates and normalises the parameters of one method from its catalog entry. */
export function parseParams(method: ConsensusMethod, raw: RawParams): ParsedParams {
  const out: ParsedParams = { page: 1, perPage: PER_PAGE_DEFAULT, prove: false };
  for (const spec of CONSENSUS_ENDPOINTS[method].params) {
    const given = raw[spec.name];
    const check = checkParam(spec, given);
    if (check.kind === "absent") continue;
    if (check.kind === "missing") throw invalidParams(check.message);
    if (check.kind === "invalid") {
      // CometBFT answers a bad query as an internal error, with the parser's words as the data.
      if (check.queryError) throw new RpcError(INTERNAL_ERROR, `Invalid query: ${check.message}`, check.message);
      throw invalidParams(`${check.message} (got ${show(paramText(given ?? "").text)})`);
    }
    const p = check.value;
    switch (p.type) {
      case "height":
        out.height = p.value;
        break;
      case "int":
        if (spec.name === "per_page") {
          // CometBFT: below 1 means the default, above the maximum clamps to it.
          out.perPage = p.value < 1n ? PER_PAGE_DEFAULT : p.value > BigInt(PER_PAGE_MAX) ? PER_PAGE_MAX : Number(p.value);
        } else {
          out.page = p.value > 1_000_000_000n ? 1_000_000_000 : Number(p.value);
        }
        break;
      case "bool":
        out.prove = p.value;
        break;
      case "order":
        out.order = p.value;
        break;
      case "hash":
        out.hash = p.value;
        break;
      case "query":
        out.query = p.value;
        break;
    }
  }
  return out;
}
