/**
 * Sending a playground request from the browser, free of React: the URL, the curl command that
 * repeats it, the call itself with the key, and what the answer means. The hook in use-send.ts
 * adds the key, the latest-request bookkeeping and the state.
 */
import { errorMessage } from "@/components/api-client";
import { encodeParam, type PlaygroundRequest } from "@/lib/chains/descriptor";

export type { PlaygroundRequest };

/** The header that carries the project's key. */
export const KEY_HEADER = "X-API-KEY";

/** The request's URL: relative (the browser calls its own origin) unless an origin is given. */
export function requestUrl(request: Pick<PlaygroundRequest, "path" | "query">, origin = ""): string {
  const query = (request.query ?? []).map(([k, v]) => `${encodeParam(k)}=${encodeParam(v)}`).join("&");
  return `${origin}${request.path}${query ? `?${query}` : ""}`;
}

/** Single-quotes a string for a POSIX shell. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A curl command that repeats the request as shown: one line without a body; with one, the
 * headers and the body on lines of their own.
 */
export function curlCommand(request: PlaygroundRequest, origin: string, key: string): string {
  const impliedMethod = request.body === undefined ? "GET" : "POST";
  const start = `curl -s${request.method === impliedMethod ? "" : ` -X ${request.method}`} ${shellQuote(requestUrl(request, origin))}`;
  const headers = [...Object.entries(request.headers ?? {}), [KEY_HEADER, key]].map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`).join(" ");
  if (request.body === undefined) return `${start} ${headers}`;
  return [start, headers, `-d ${shellQuote(request.body)}`].join(" \\\n  ");
}

/** What a response means for the person who sent it. */
export type Outcome =
  | { kind: "result" }
  /** A JSON-RPC error object (HTTP 200 from the JSON-RPC endpoints): bad parameters, a bad query, a node's error. */
  | { kind: "rpc-error"; code: number | null; message: string; data: unknown }
  /** Authentication, limits, unknown paths: `{ code, message }` with the HTTP status; a REST endpoint's `{ error_code, message }`. */
  | { kind: "http-error"; code: string | null; message: string }
  | { kind: "unexpected"; message: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function classify(status: number, body: unknown, answers: PlaygroundRequest["answers"] = "jsonrpc"): Outcome {
  if (answers === "rest" && status >= 200 && status < 300) {
    return body === undefined ? { kind: "unexpected", message: "The answer is not JSON." } : { kind: "result" };
  }
  if (answers === "jsonrpc" && isRecord(body) && isRecord(body.error)) {
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
      code: typeof body.code === "string" ? body.code : typeof body.error_code === "string" ? body.error_code : null,
      message: typeof body.message === "string" ? body.message : `The request failed with HTTP ${status}.`,
    };
  }
  if (status >= 400) return { kind: "http-error", code: null, message: `The request failed with HTTP ${status}.` };
  return { kind: "unexpected", message: body === undefined ? "The answer is not JSON." : "The answer has neither a result nor an error." };
}

/** CU charged: the catalog's cost for a result, 0 for any error (errors are free). */
export function chargedCu(cu: number, outcome: Outcome): number {
  return outcome.kind === "result" ? cu : 0;
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

export const isAbort = (e: unknown): boolean => e instanceof DOMException && e.name === "AbortError";

/**
 * Calls a URL with the key. Throws an AbortError when aborted and a readable Error when the
 * network fails; any HTTP answer, error statuses included, resolves.
 */
export async function callEndpoint(url: string, request: PlaygroundRequest, key: string, signal: AbortSignal): Promise<RawResponse> {
  const started = performance.now();
  const headers = { Accept: "application/json", ...request.headers, [KEY_HEADER]: key };
  let res: Response;
  try {
    res = await fetch(url, { method: request.method, headers, body: request.body, cache: "no-store", credentials: "omit", signal });
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new Error("Could not reach the endpoint. Check your connection and try again.");
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new Error("The connection broke while the answer was arriving. Try again.");
  }
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

/** What came of a request: an HTTP answer, or why there is none. */
export type Answer = (RawResponse & { kind: "response"; outcome: Outcome }) | { kind: "failed"; message: string };

/**
 * Loads the key, then calls the endpoint: every failure becomes an Answer with words for the
 * person who sent it; null when the request was aborted (a newer one replaced it, or the page left).
 */
export async function sendRequest(url: string, request: PlaygroundRequest, secret: () => Promise<string>, signal: AbortSignal): Promise<Answer | null> {
  let key: string;
  try {
    key = await secret();
  } catch (e) {
    return { kind: "failed", message: `Could not load your API key. ${errorMessage(e)}` };
  }
  try {
    const res = await callEndpoint(url, request, key, signal);
    return { ...res, kind: "response", outcome: classify(res.status, res.json, request.answers) };
  } catch (e) {
    if (isAbort(e)) return null;
    return { kind: "failed", message: e instanceof Error ? e.message : "The request failed." };
  }
}

/** One request at a time: starting one aborts the one before, and only the latest may report. */
export class LatestRequest {
  #seq = 0;
  #controller: AbortController | null = null;

  start(): { seq: number; signal: AbortSignal; isLatest: () => boolean } {
    this.#controller?.abort();
    const controller = new AbortController();
    this.#controller = controller;
    const seq = ++this.#seq;
    return { seq, signal: controller.signal, isLatest: () => seq === this.#seq };
  }

  abort(): void {
    this.#controller?.abort();
  }
}

/** What the response view says about the request it shows. */
export interface Sent {
  /** Increases with every request, so a new answer starts with a fresh tree. */
  seq: number;
  networkName: string;
  /** The endpoint or JSON-RPC method, as the picker names it. */
  method: string;
  httpMethod: PlaygroundRequest["method"];
  /** The URL as sent, relative to the public origin. */
  path: string;
}

export type Exchange = (Sent & RawResponse & { kind: "response"; outcome: Outcome; cu: number }) | (Sent & { kind: "failed"; message: string });

/** The exchange to show for an answer; `cu` is what the request costs when it succeeds. */
export function exchangeOf(sent: Sent, answer: Answer, cu: number): Exchange {
  return answer.kind === "response" ? { ...sent, ...answer, cu: chargedCu(cu, answer.outcome) } : { ...sent, ...answer };
}

/**
 * A Retry-After value (seconds, or an HTTP date) as a person reads it: "2 s", or for a long wait
 * "17 h 54 min (at 00:00 UTC)"; the value itself when it is neither.
 */
export function retryAfterText(value: string, now = Date.now()): string {
  const at = /^\d+$/.test(value.trim()) ? now + Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(at)) return value;
  const seconds = Math.max(0, Math.ceil((at - now) / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  const span = minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
  const when = new Date(at);
  const clock = `${String(when.getUTCHours()).padStart(2, "0")}:${String(when.getUTCMinutes()).padStart(2, "0")} UTC`;
  return `${span} (at ${clock}${when.getUTCDate() !== new Date(now).getUTCDate() || at - now > 86_400_000 ? `, ${when.toISOString().slice(0, 10)}` : ""})`;
}
