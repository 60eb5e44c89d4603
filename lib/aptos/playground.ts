/**
 * The Move family's playground tab (the Aptos read API), free of React: the routes it offers (from
 * the read API's catalog), each parameter's field checked with the rules the endpoint applies,
 * values filled from the network's index, and the request the form makes.
 */
import { blockerOf, encodeParam, type FieldCheck, type FormCheck, type ParamExample, type ParamValues, type PlaygroundRequest } from "@/lib/chains/descriptor";
import type { ParamSpec } from "@/lib/consensus/catalog";
import { APTOS_PAGE_DEFAULT, APTOS_PAGE_MAX, APTOS_ROUTES, type AptosParamSpec, type AptosRoute } from "./catalog";
import type { AptosExamples } from "./examples";
import { parseAddress, parseHash, parseU64 } from "./rest";

/** The routes the playground offers: every route of the catalog, in its order. */
export const APTOS_PLAYGROUND_ROUTES = Object.keys(APTOS_ROUTES) as AptosRoute[];

export function isAptosRoute(r: string): r is AptosRoute {
  return Object.hasOwn(APTOS_ROUTES, r);
}

/** How a parameter is typed and checked. */
type Kind = "u64" | "limit" | "hash" | "address" | "bool";

const KINDS: Record<string, Kind> = {
  txn_hash: "hash",
  txn_version: "u64",
  version: "u64",
  block_height: "u64",
  start: "u64",
  limit: "limit",
  with_transactions: "bool",
  address: "address",
};

const kindOf = (p: AptosParamSpec): Kind => KINDS[p.name] ?? "u64";

/** Path parameters are required; query parameters are optional. */
const isRequired = (p: AptosParamSpec) => p.in === "path";

/** The parameter as a form field (the shape the playground's ParamField shows). */
export function aptosFieldSpec(p: AptosParamSpec): ParamSpec {
  const base = { name: p.name, required: isRequired(p), description: p.description };
  switch (kindOf(p)) {
    case "hash":
    case "address":
      return { ...base, type: "hash" };
    case "bool":
      return { ...base, type: "bool", default: "false" };
    case "limit":
      return { ...base, type: "int", max: APTOS_PAGE_MAX, default: String(APTOS_PAGE_DEFAULT) };
    case "u64":
      return { ...base, type: "int" };
  }
}

/** A short description of a parameter's type and limits. */
export function aptosTypeSummary(p: AptosParamSpec): string {
  const required = isRequired(p) ? "required" : "optional";
  switch (kindOf(p)) {
    case "hash":
      return `hex, 64 digits, 0x optional · ${required}`;
    case "address":
      return `hex, 1 to 64 digits, 0x optional · ${required}`;
    case "bool":
      return `true or false · default false · ${required}`;
    case "limit":
      return `integer 1–${APTOS_PAGE_MAX} · default ${APTOS_PAGE_DEFAULT} · ${required}`;
    case "u64":
      return `integer ≥ 0 · ${required}`;
  }
}

export function aptosPlaceholder(p: AptosParamSpec): string | undefined {
  switch (kindOf(p)) {
    case "hash":
      return "0x and 64 hex digits";
    case "address":
      return "0x1";
    case "limit":
      return `${APTOS_PAGE_DEFAULT} (default)`;
    case "u64":
      return p.name === "start" ? "latest page" : undefined;
    case "bool":
      return undefined;
  }
}

const U64_MAX = "18446744073709551615";

function accepts(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}

/** Why a typed value would be refused by the endpoint, in words; null when it is taken. */
function valueError(p: AptosParamSpec, text: string): string | null {
  switch (kindOf(p)) {
    case "u64":
      if (!/^\d+$/.test(text)) return "Enter a whole number (digits only).";
      return accepts(() => parseU64(p.name, text)) ? null : `Enter at most ${U64_MAX}.`;
    case "limit": {
      if (!/^\d+$/.test(text)) return "Enter a whole number (digits only).";
      const n = Number(text);
      return n >= 1 && n <= APTOS_PAGE_MAX ? null : `Enter a number from 1 to ${APTOS_PAGE_MAX}.`;
    }
    case "hash":
      return accepts(() => parseHash(p.name, text)) ? null : "Enter 64 hex digits, with or without 0x.";
    case "address":
      return accepts(() => parseAddress(p.name, text)) ? null : "Enter 1 to 64 hex digits, with or without 0x.";
    case "bool":
      return text === "true" || text === "false" ? null : "Enter true or false.";
  }
}

/** Checks a value as the endpoint would read it (trimmed), so that a request that cannot succeed is not sent. */
export function checkAptosField(p: AptosParamSpec, value: string): FieldCheck {
  const text = value.trim();
  if (text === "") return { missing: isRequired(p), error: null, query: null };
  return { missing: false, error: valueError(p, text), query: null };
}

/** The form's checks, what blocks Send, and what the route costs (the catalog's CU). */
export function checkAptosForm(route: AptosRoute, values: ParamValues): FormCheck {
  const checks: Record<string, FieldCheck> = {};
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const p of APTOS_ROUTES[route].params) {
    const check = checkAptosField(p, values[p.name] ?? "");
    checks[p.name] = check;
    if (check.missing) missing.push(p.name);
    if (check.error) invalid.push(p.name);
  }
  return { checks, blocker: blockerOf(invalid, missing), cu: APTOS_ROUTES[route].cu };
}

/**
 * `GET /aptos/<network>/v1/<route>` on the public origin: path parameters trimmed and encoded into
 * the path, query parameters in catalog order when given (with_transactions only when true).
 */
export function aptosRequest(networkPath: string, route: AptosRoute, values: ParamValues): PlaygroundRequest {
  const spec = APTOS_ROUTES[route];
  let path = spec.path === "/" ? "" : spec.path;
  const query: Array<[string, string]> = [];
  for (const p of spec.params) {
    const text = (values[p.name] ?? "").trim();
    if (p.in === "path") path = path.replace(`{${p.name}}`, encodeParam(text));
    else if (text !== "" && !(kindOf(p) === "bool" && text === "false")) query.push([p.name, text]);
  }
  return { method: "GET", path: `/aptos/${encodeParam(networkPath)}/v1${path}`, query, answers: "rest" };
}

/** The example for a parameter, from the network's index; null when it has none. */
export function aptosExampleFor(name: string, ex: AptosExamples | undefined): ParamExample | null {
  const tx = ex?.transaction ?? null;
  switch (name) {
    case "txn_hash":
      return tx && { value: tx.hash, description: "a recent transaction" };
    case "txn_version":
    case "version":
      return tx && { value: tx.version, description: "a recent transaction" };
    case "block_height":
      return ex?.blockHeight ? { value: ex.blockHeight, description: "latest height" } : null;
    case "address":
      return tx?.sender ? { value: tx.sender, description: "a recent sender" } : null;
    default:
      return null;
  }
}

/** A field's value before it is edited: a required parameter's example, a toggle's default, else empty. */
export function aptosDefaultValue(p: AptosParamSpec, ex: AptosExamples | undefined): string {
  if (kindOf(p) === "bool") return "false";
  return isRequired(p) ? (aptosExampleFor(p.name, ex)?.value ?? "") : "";
}

