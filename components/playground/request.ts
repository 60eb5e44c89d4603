/**
 * The consensus tab's form logic, free of React: the values of an endpoint's form, checked with the
 * endpoint's own rules (lib/consensus/params.ts), and the request they make.
 */
import { callCu, CONSENSUS_ENDPOINTS, type ConsensusMethod, type EndpointSpec, type ParamSpec } from "@/lib/consensus/catalog";
import { checkParam, HASH_HEX_DIGITS, paramText } from "@/lib/consensus/params";
import { MAX_QUERY_LENGTH, type Query, type QueryError } from "@/lib/consensus/query/parse";
import type { PlaygroundRequest } from "./send";

/** Values as typed, by parameter name. */
export type ParamValues = Record<string, string>;

/** What a field shows about its value. */
export interface FieldCheck {
  /** A required parameter without a value (not shown as an error: Send says what is missing). */
  missing: boolean;
  error: string | null;
  /** A query's parse error, over the text the endpoint reads, which starts at `start` in the field. */
  query: { error: QueryError; text: string; start: number } | null;
}

const FINE: FieldCheck = { missing: false, error: null, query: null };

/** The first values of an endpoint's form: empty, except selects and toggles, which show their default. */
export function initialValues(spec: EndpointSpec): ParamValues {
  return Object.fromEntries(spec.params.map((p) => [p.name, p.type === "order" || p.type === "bool" ? (p.default ?? "") : ""]));
}

export function initialValuesByMethod(): Record<ConsensusMethod, ParamValues> {
  return Object.fromEntries(Object.values(CONSENSUS_ENDPOINTS).map((spec) => [spec.method, initialValues(spec)])) as Record<ConsensusMethod, ParamValues>;
}

const sentence = (message: string) => `${message}.`;

/**
 * Checks a value with the endpoint's rules, so that a request that cannot succeed is not sent; an
 * integer outside the catalog's range is refused too, although the endpoint would read it.
 */
export function checkField(spec: ParamSpec, value: string): FieldCheck {
  const check = checkParam(spec, value);
  switch (check.kind) {
    case "absent":
      return FINE;
    case "missing":
      return { ...FINE, missing: true };
    case "invalid": {
      const query = check.queryError ? { error: check.queryError, ...paramText(value) } : null;
      return { ...FINE, error: sentence(check.message), query };
    }
    case "valid":
      return check.outside === undefined ? FINE : { ...FINE, error: sentence(check.outside) };
  }
}

export interface FormCheck {
  checks: Record<string, FieldCheck>;
  /** Why Send is disabled, for the sentence beside it; null when the request can be sent. */
  blocker: string | null;
  /** What the call costs: the catalog's CU, with a search's per-condition part for the query typed. */
  cu: number;
}

export function checkForm(spec: EndpointSpec, values: ParamValues): FormCheck {
  const checks: Record<string, FieldCheck> = {};
  const missing: string[] = [];
  const invalid: string[] = [];
  let query: Query | undefined;
  for (const p of spec.params) {
    const value = values[p.name] ?? "";
    if (p.type === "query") {
      const parsed = checkParam(p, value);
      if (parsed.kind === "valid" && parsed.value.type === "query") query = parsed.value.value;
    }
    const check = checkField(p, value);
    checks[p.name] = check;
    if (check.missing) missing.push(p.name);
    if (check.error) invalid.push(p.name);
  }
  const blocker = invalid.length > 0 ? `Fix ${list(invalid)} to send.` : missing.length > 0 ? `Enter ${list(missing)} to send.` : null;
  return { checks, blocker, cu: callCu(spec.method, query) };
}

export function list(names: string[]): string {
  return names.length === 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1) ?? ""}`;
}

/**
 * The parameters to send, in catalog order: typed values (trimmed, except a query, sent as typed),
 * and selects or toggles only when they differ from the default.
 */
export function requestParams(spec: EndpointSpec, values: ParamValues): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const p of spec.params) {
    const raw = values[p.name] ?? "";
    if (paramText(raw).text === "") continue;
    if ((p.type === "order" || p.type === "bool") && raw === p.default) continue;
    out.push([p.name, p.type === "query" ? raw : raw.trim()]);
  }
  return out;
}

/** `GET /rpc/<slug>/<method>?<params>` on the public origin. */
export function consensusRequest(slug: string, method: ConsensusMethod, params: Array<[string, string]>): PlaygroundRequest {
  return { method: "GET", path: `/rpc/${slug}/${method}`, query: params };
}

export interface QueryExcerpt {
  /** Text before the offending character, from the start of the excerpt. */
  before: string;
  /** The character at the offset; empty at the end of the query. */
  at: string;
  after: string;
  /** Characters shown before the caret (the caret sits under `at`). */
  column: number;
}

const EXCERPT_RADIUS = 40;

/** A window of the query around an error offset, with whitespace made single-width so the caret lines up. */
export function queryExcerpt(query: string, offset: number): QueryExcerpt {
  const clamp = Math.max(0, Math.min(offset, query.length));
  const start = Math.max(0, clamp - EXCERPT_RADIUS);
  const end = Math.min(query.length, clamp + 1 + EXCERPT_RADIUS);
  const flat = (s: string) => s.replace(/[\t\n\r]/g, " ");
  const before = (start > 0 ? "…" : "") + flat(query.slice(start, clamp));
  const at = flat(query.slice(clamp, clamp + 1));
  const after = flat(query.slice(clamp + 1, end)) + (end < query.length ? "…" : "");
  return { before, at, after, column: Array.from(before).length };
}

/** A short human description of a parameter's type and limits, from the catalog. */
export function typeSummary(p: ParamSpec): string {
  const parts: string[] = [];
  switch (p.type) {
    case "height":
      parts.push("integer ≥ 1");
      break;
    case "int":
      parts.push(p.max !== undefined ? `integer 1–${p.max}` : "integer ≥ 1");
      break;
    case "query":
      parts.push(`query, at most ${MAX_QUERY_LENGTH} characters`);
      break;
    case "hash":
      parts.push(`hex, ${HASH_HEX_DIGITS} digits`);
      break;
    case "bool":
      parts.push("true or false");
      break;
    case "order":
      parts.push("asc or desc");
      break;
  }
  if (p.default !== undefined) parts.push(`default ${p.default}`);
  parts.push(p.required ? "required" : "optional");
  return parts.join(" · ");
}
