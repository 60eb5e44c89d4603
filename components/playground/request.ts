/**
 * The playground's request logic, free of React: checking parameter values against the endpoint
 * catalog, building the public URL and the curl command, and reading what came back.
 */
import { CONSENSUS_ENDPOINTS, type ConsensusMethod, type EndpointSpec, type ParamSpec } from "@/lib/consensus/catalog";
import { MAX_QUERY_LENGTH, parseQuery, type QueryError } from "@/lib/consensus/query/parse";

/** Values as typed, by parameter name. */
export type ParamValues = Record<string, string>;

export interface ParamCheck {
  /** A required parameter without a value (not shown as an error: Send says what is missing). */
  missing: boolean;
  error: string | null;
  /** The parser's error for a query, with the offset to point at. */
  queryError: QueryError | null;
}

const OK: ParamCheck = { missing: false, error: null, queryError: null };
const INT64_MAX = 9223372036854775807n;
const HASH_HEX_DIGITS = 64;

/** The first values of an endpoint's form: empty, except selects and toggles, which show their default. */
export function initialValues(spec: EndpointSpec): ParamValues {
  return Object.fromEntries(spec.params.map((p) => [p.name, p.type === "order" || p.type === "bool" ? (p.default ?? "") : ""]));
}

export function initialValuesByMethod(): Record<ConsensusMethod, ParamValues> {
  return Object.fromEntries(Object.values(CONSENSUS_ENDPOINTS).map((spec) => [spec.method, initialValues(spec)])) as Record<ConsensusMethod, ParamValues>;
}

function isBlank(value: string): boolean {
  return value.trim() === "";
}

function checkInteger(spec: ParamSpec, value: string): string | null {
  const v = value.trim();
  if (!/^\d+$/.test(v)) return "Enter a whole number, such as 5.";
  const n = BigInt(v);
  if (n < 1n) return `${spec.name} starts at 1.`;
  if (spec.max !== undefined && n > BigInt(spec.max)) return `${spec.name} is at most ${spec.max}.`;
  if (n > INT64_MAX) return `${spec.name} is too large.`;
  return null;
}

function checkHash(value: string): string | null {
  const hex = value.trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]*$/.test(hex)) return "A hash has only hex digits (0-9, a-f), optionally after 0x.";
  if (hex.length !== HASH_HEX_DIGITS) return `A transaction hash has ${HASH_HEX_DIGITS} hex digits; this one has ${hex.length}.`;
  return null;
}

/** Checks one value the way the endpoint would, so that a request that cannot succeed is not sent. */
export function checkParam(spec: ParamSpec, value: string): ParamCheck {
  if (isBlank(value)) return spec.required ? { ...OK, missing: true } : OK;
  switch (spec.type) {
    case "height":
    case "int":
      return { ...OK, error: checkInteger(spec, value) };
    case "hash":
      return { ...OK, error: checkHash(value) };
    case "query": {
      const parsed = parseQuery(value);
      return parsed.ok ? OK : { ...OK, error: parsed.error.message, queryError: parsed.error };
    }
    case "order":
      return { ...OK, error: value === "asc" || value === "desc" ? null : "Choose asc or desc." };
    case "bool":
      return { ...OK, error: value === "true" || value === "false" ? null : "Choose true or false." };
  }
}

export interface FormCheck {
  checks: Record<string, ParamCheck>;
  valid: boolean;
  /** Why Send is disabled, for the sentence beside it; null when the request can be sent. */
  blocker: string | null;
}

export function checkForm(spec: EndpointSpec, values: ParamValues): FormCheck {
  const checks: Record<string, ParamCheck> = {};
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const p of spec.params) {
    const check = checkParam(p, values[p.name] ?? "");
    checks[p.name] = check;
    if (check.missing) missing.push(p.name);
    if (check.error) invalid.push(p.name);
  }
  const blocker = invalid.length > 0 ? `Fix ${list(invalid)} to send.` : missing.length > 0 ? `Enter ${list(missing)} to send.` : null;
  return { checks, valid: blocker === null, blocker };
}

function list(names: string[]): string {
  return names.length === 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1) ?? ""}`;
}

/**
 * The parameters to send, in catalog order: typed values (trimmed, except a query, whose offsets
 * must match what was typed), and selects or toggles only when they differ from the default.
 */
export function requestParams(spec: EndpointSpec, values: ParamValues): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const p of spec.params) {
    const raw = values[p.name] ?? "";
    if (isBlank(raw)) continue;
    if ((p.type === "order" || p.type === "bool") && raw === p.default) continue;
    out.push([p.name, p.type === "query" ? raw : raw.trim()]);
  }
  return out;
}

/**
 * encodeURIComponent, plus the characters it leaves alone that a shell or a strict server could
 * misread: a query's single quotes must not end the single-quoted URL of the curl command.
 */
export function encodeParam(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `/rpc/<slug>/<method>?<params>`, relative to the public origin. */
export function rpcPath(slug: string, method: ConsensusMethod, params: Array<[string, string]>): string {
  const query = params.map(([k, v]) => `${k}=${encodeParam(v)}`).join("&");
  return `/rpc/${slug}/${method}${query ? `?${query}` : ""}`;
}

/** A command that runs as shown: the URL holds no single quote (see encodeParam) and neither does a key. */
export function curlCommand(origin: string, path: string, key: string): string {
  return `curl -s '${origin}${path}' -H 'X-API-KEY: ${key}'`;
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

/** What a response means for the person who sent it. */
export type Outcome =
  | { kind: "result" }
  /** HTTP 200 with a JSON-RPC error object: bad parameters or a bad query. */
  | { kind: "rpc-error"; code: number | null; message: string; data: unknown }
  /** Authentication, limits, unknown paths: `{ code, message }` with the HTTP status. */
  | { kind: "http-error"; code: string | null; message: string }
  | { kind: "unexpected"; message: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function classify(status: number, body: unknown): Outcome {
  if (isRecord(body) && isRecord(body.error)) {
    const e = body.error;
    return {
      kind: "rpc-error",
      code: typeof e.code === "number" ? e.code : null,
      message: typeof e.message === "string" ? e.message : "The endpoint answered with an error.",
      data: e.data,
    };
  }
  if (status >= 200 && status < 300 && isRecord(body) && "result" in body) return { kind: "result" };
  if (status >= 400 && isRecord(body)) {
    return {
      kind: "http-error",
      code: typeof body.code === "string" ? body.code : null,
      message: typeof body.message === "string" ? body.message : `The request failed with HTTP ${status}.`,
    };
  }
  if (status >= 400) return { kind: "http-error", code: null, message: `The request failed with HTTP ${status}.` };
  return { kind: "unexpected", message: body === undefined ? "The answer is not JSON." : "The answer has neither a result nor an error." };
}

/** CU charged: the catalog's cost for a result, 0 for any error (errors are free). */
export function chargedCu(spec: Pick<EndpointSpec, "cu">, outcome: Outcome): number {
  return outcome.kind === "result" ? spec.cu : 0;
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

export interface RawResponse {
  status: number;
  statusText: string;
  /** From sending to the last byte of the body, measured in the browser. */
  ms: number;
  requestId: string | null;
  retryAfter: string | null;
  text: string;
  /** The parsed body; undefined when it is not JSON. */
  json: unknown;
}

/**
 * Calls a public endpoint path with a key: a GET, or a POST of a JSON body when `body` is given.
 * Throws an AbortError when aborted and a readable Error when the network fails; any HTTP answer,
 * error statuses included, resolves.
 */
export async function callEndpoint(path: string, key: string, signal: AbortSignal, body?: string): Promise<RawResponse> {
  const started = performance.now();
  const headers: Record<string, string> = { "X-API-KEY": key, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method: body === undefined ? "GET" : "POST", headers, body, cache: "no-store", credentials: "omit", signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new Error("Could not reach the endpoint. Check your connection and try again.");
  }
  const text = await res.text();
  const ms = performance.now() - started;
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    statusText: res.statusText,
    ms,
    requestId: res.headers.get("X-Request-Id"),
    retryAfter: res.headers.get("Retry-After"),
    text,
    json,
  };
}
