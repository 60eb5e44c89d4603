/**
 * Parameters of the native CometBFT interface, in the two forms a CometBFT node takes them: the
 * URI form (`?height=5&hash=0xABCD…&query="tx.height=5"`: integers bare, byte params as 0x-hex or
 * a quoted string, strings quoted) and JSON-RPC (named or positional; int64 as a string or a
 * number, []byte as base64, HexBytes as hex). Checks reuse the /rpc rules (params.ts).
 */
import { fromBase64, fromHex, toBase64, toHex, utf8 } from "../crypto";
import { COMETBFT_ENDPOINTS, PER_PAGE_DEFAULT, PER_PAGE_MAX, type CometbftMethod, type CometbftParamType, type ParamSpec } from "../catalog";
import { checkParam, paramText, type ParsedParams } from "../params";
import { INTERNAL_ERROR, INVALID_PARAMS, RpcError } from "@/lib/jsonrpc/errors";

export type Form = "uri" | "json";

export interface NativeParams {
  /** What the /rpc handlers read (page, per_page, order, prove, hash, query, height). */
  parsed: ParsedParams;
  given: ReadonlySet<string>;
  minHeight?: bigint;
  maxHeight?: bigint;
  chunk?: number;
  limit?: number;
  /** The params as CometBFT's JSON-RPC takes them, for a call forwarded to the node. */
  forward: Record<string, unknown>;
}

/** CometBFT's words for a parameter it cannot convert. */
export function badParam(form: Form, detail: string): RpcError {
  return new RpcError(INVALID_PARAMS, "Invalid params", `error converting ${form === "uri" ? "http" : "json"} params to arguments: ${detail}`);
}

const REQUIRED: Partial<Record<string, true>> = { query: true, hash: true, tx: true };

function bytesOf(form: Form, name: string, type: CometbftParamType, v: unknown): Uint8Array {
  if (typeof v !== "string") throw badParam(form, `${name} must be a string, got ${JSON.stringify(v)}`);
  if (/^0x/i.test(v)) {
    try {
      return fromHex(v.slice(2));
    } catch {
      throw badParam(form, `${name}: invalid hex after 0x`);
    }
  }
  if (form === "uri" && type !== "hexbytes") {
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return utf8(v.slice(1, -1));
  }
  if (type === "hexbytes" || (type === "hash" && /^[0-9a-fA-F]{64}$/.test(v))) {
    try {
      return fromHex(v);
    } catch {
      throw badParam(form, `${name} must be hex`);
    }
  }
  if (form === "uri") throw badParam(form, `${name} must be 0x-prefixed hex or a quoted string`);
  try {
    return fromBase64(v);
  } catch {
    throw badParam(form, `${name} must be base64 (as CometBFT's JSON encodes bytes)`);
  }
}

/** A value as the text the /rpc checks read. */
function textOf(form: Form, name: string, v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw badParam(form, `${name}: unexpected ${v === null ? "null" : typeof v}`);
}

/** Reads a method's params; `raw` is named (an object) or positional (an array). */
export function parseNativeParams(method: CometbftMethod, raw: Record<string, unknown> | unknown[], form: Form): NativeParams {
  const specs = COMETBFT_ENDPOINTS[method].params;
  const named: Record<string, unknown> = {};
  if (Array.isArray(raw)) {
    if (raw.length > specs.length) throw badParam(form, `expected at most ${specs.length} parameters (${specs.map((s) => s.name).join(", ")}), got ${raw.length}`);
    raw.forEach((v, i) => (named[specs[i]!.name] = v));
  } else Object.assign(named, raw);
  const out: NativeParams = { parsed: { page: 1, perPage: PER_PAGE_DEFAULT, prove: false }, given: new Set(), forward: {} };
  for (const { name, type } of specs) {
    const v = named[name];
    if (v === undefined || v === null || v === "") {
      if (REQUIRED[name]) throw badParam(form, `${name} is required`);
      continue;
    }
    (out.given as Set<string>).add(name);
    if (type === "hash" || type === "bytes" || type === "hexbytes") {
      const bytes = bytesOf(form, name, type, v);
      if (type === "hash") {
        if (bytes.length !== 32) throw badParam(form, `${name} must be 32 bytes, got ${bytes.length}`);
        out.parsed.hash = toHex(bytes);
      }
      out.forward[name] = type === "hexbytes" ? toHex(bytes) : toBase64(bytes);
      continue;
    }
    const text = textOf(form, name, v);
    if (type === "string") {
      out.forward[name] = paramText(text).text;
      continue;
    }
    const spec: ParamSpec = { name, type, required: false, description: "", max: name === "per_page" ? PER_PAGE_MAX : undefined };
    const check = checkParam(spec, text);
    if (check.kind === "absent" || check.kind === "missing") continue;
    if (check.kind === "invalid") {
      // CometBFT answers a query it cannot parse as an internal error of the handler.
      if (check.queryError) throw new RpcError(INTERNAL_ERROR, "Internal error", check.message);
      throw badParam(form, check.message);
    }
    const p = check.value;
    switch (p.type) {
      case "height":
        if (name === "minHeight") out.minHeight = p.value;
        else if (name === "maxHeight") out.maxHeight = p.value;
        else out.parsed.height = p.value;
        out.forward[name] = p.value.toString();
        break;
      case "int":
        if (name === "per_page") out.parsed.perPage = p.value < 1n ? PER_PAGE_DEFAULT : p.value > BigInt(PER_PAGE_MAX) ? PER_PAGE_MAX : Number(p.value);
        else if (name === "page") out.parsed.page = p.value > 1_000_000_000n ? 1_000_000_000 : Number(p.value);
        else if (name === "chunk") out.chunk = Number(p.value > 1_000_000n ? 1_000_000n : p.value);
        else if (name === "limit") out.limit = Number(p.value > 1000n ? 1000n : p.value);
        out.forward[name] = p.value.toString();
        break;
      case "bool":
        out.parsed.prove = p.value;
        out.forward[name] = p.value;
        break;
      case "order":
        out.parsed.order = p.value;
        out.forward[name] = p.value;
        break;
      case "query":
        out.parsed.query = p.value;
        out.forward[name] = paramText(text).text;
        break;
      case "hash":
        break;
    }
  }
  return out;
}
