/**
 * The JSON-RPC 2.0 envelope (https://www.jsonrpc.org/specification) shared by the public JSON-RPC
 * interfaces: parsing a body into requests, ids, notifications, batches, and the one rule for the
 * rate limit. What a method does and costs is the caller's business.
 */
import { AppError } from "@/lib/errors";
import type { GatewayContext, GatewayResponse } from "@/lib/gateway/types";
import { INVALID_REQUEST, InvalidRequest, PARSE_ERROR, RateLimited, RpcError, Unavailable, type ErrorObject, type Id, type Refused } from "./errors";
import { RawJson, stringifyWithRaw } from "./raw-json";
import { idStart, idStarts, nestedDeeperThan, numberEnd } from "./scan";

export const MAX_BATCH = 100;
/** Arrays and objects nested deeper than this are refused before the body is parsed. */
export const MAX_DEPTH = 64;

/** What tells the interfaces' answers apart. */
export interface Dialect {
  /** Every error carries data; the message when there is nothing more to say (as CometBFT answers). */
  readonly messageAsData: boolean;
  /** Results may hold RawJson: answers are always written with stringifyWithRaw. */
  readonly rawResults: boolean;
}

/** A request object that passed the checks of JSON-RPC 2.0. Without "id" it is a notification. */
export interface RequestObject {
  jsonrpc: "2.0";
  id?: string | number | null;
  method: string;
  params?: unknown[] | Record<string, unknown>;
}

/** One item's answer: an object, or the answer's JSON text ready to send (a node's bytes passed through). */
export type Answer = ({ jsonrpc: "2.0"; id: Id } & ({ result: unknown } | { error: RpcError | ErrorObject })) | RawJson;

export const failure = (id: Id, error: RpcError | ErrorObject): Answer => ({ jsonrpc: "2.0", id, error });

function envelopeError(dialect: Dialect, code: number, message: string): RpcError {
  return new RpcError(code, message, dialect.messageAsData ? message : undefined);
}

/** The answer to a body that is no request at all (not JSON, too deep, an empty or oversized batch). */
export function refuseBody(error: RpcError): GatewayResponse {
  return { status: 200, body: failure(null, error) };
}

/**
 * Reads a request body: JSON of at most MAX_DEPTH levels, one request object or a batch of 1 to
 * MAX_BATCH. Returns the error to answer with id null otherwise (see refuseBody).
 */
export function parseBody(raw: Buffer, dialect: Dialect): Body | RpcError {
  const text = raw.toString("utf8");
  if (nestedDeeperThan(text, MAX_DEPTH)) {
    return envelopeError(dialect, INVALID_REQUEST, `Invalid Request: the body nests arrays and objects deeper than ${MAX_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return envelopeError(dialect, PARSE_ERROR, "Parse error: the body is not valid JSON");
  }
  if (!Array.isArray(value)) return new Body(text, value, dialect);
  if (value.length === 0) return envelopeError(dialect, INVALID_REQUEST, "Invalid Request: the batch is empty");
  if (value.length > MAX_BATCH) return envelopeError(dialect, INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} requests`);
  return new Body(text, value, dialect);
}

/**
 * A parsed body: its items, checked one at a time (`request`), and the HTTP answer made of their
 * answers (`respond`).
 */
export class Body {
  readonly batch: boolean;
  /** Number of items: 1 for a single request. */
  readonly size: number;
  private ids: Int32Array | undefined;
  private rawIds = false;
  /** Items that are notifications: run, never answered. */
  private silent: boolean[] | undefined;

  constructor(
    private readonly text: string,
    private readonly value: unknown,
    private readonly dialect: Dialect,
  ) {
    this.batch = Array.isArray(value);
    this.size = Array.isArray(value) ? value.length : 1;
  }

  private item(i: number): unknown {
    return Array.isArray(this.value) ? (this.value[i] as unknown) : this.value;
  }

  /** Item `i` as a request, or the Invalid Request it is answered with (with its id when that could be read). */
  request(i: number): RequestObject | InvalidRequest {
    const item = this.item(i);
    if (typeof item !== "object" || item === null || Array.isArray(item)) return this.invalid(null, "expected a JSON-RPC 2.0 request object");
    const req = item as Record<string, unknown>;
    const id = req.id;
    if (id !== undefined && id !== null && typeof id !== "string" && typeof id !== "number") {
      return this.invalid(null, req.jsonrpc !== "2.0" ? '"jsonrpc" must be "2.0"' : '"id" must be a string, a number or null');
    }
    const problem =
      req.jsonrpc !== "2.0"
        ? '"jsonrpc" must be "2.0"'
        : typeof req.method !== "string" || req.method === ""
          ? '"method" must be a non-empty string'
          : req.params !== undefined && (typeof req.params !== "object" || req.params === null)
            ? '"params" must be an array or an object'
            : undefined;
    if (problem) return this.invalid(this.idOf(i, id), problem);
    if (id === undefined) (this.silent ??= [])[i] = true;
    // Every member that JSON-RPC defines was checked above.
    return item as RequestObject;
  }

  private invalid(id: Id, problem: string): InvalidRequest {
    const message = `Invalid Request: ${problem}`;
    return new InvalidRequest(id, message, this.dialect.messageAsData ? message : undefined);
  }

  /** The id to answer item `i` (a valid request) with: null for a notification. */
  id(i: number, req: RequestObject): Id {
    return this.idOf(i, req.id);
  }

  private idOf(i: number, id: string | number | null | undefined): Id {
    if (typeof id !== "number") return id ?? null;
    // A number is answered as the caller wrote it. JSON.stringify writes the common case (1, 42)
    // back the same; 1.0e3, -0, 12.50 or 30 digits need the caller's text, which a scan finds
    // (stopping at the id of a single request).
    const start = this.batch ? (this.ids ??= idStarts(this.text, this.size))[i]! : idStart(this.text);
    if (start === -1) return id;
    const end = numberEnd(this.text, start);
    const canonical = String(id);
    if (end - start === canonical.length && this.text.startsWith(canonical, start)) return id;
    const raw = this.text.slice(start, end);
    // Another "id" member came later (duplicate keys): JSON.parse kept that one's value.
    if (!Object.is(Number(raw), id)) return id;
    this.rawIds = true;
    return new RawJson(raw);
  }

  /**
   * The HTTP answer: HTTP 429 when the rate limit refused every item; otherwise the answers of the
   * items that are not notifications (in order, a lone object for a single request), or 204 No
   * Content when nothing is left, with HTTP 503 and Retry-After when every item answers that the
   * database is unreachable. `answers[i]` answers item `i`.
   */
  respond(answers: readonly Answer[]): GatewayResponse {
    const limited = allRefused(answers, RateLimited);
    if (limited) return tooManyRequests(limited);
    const unavailable = allRefused(answers, Unavailable);
    const response = this.answer(answers);
    if (unavailable) return serviceUnavailable(response, unavailable);
    // Some items were rate-limited and others ran: HTTP 200, and still the longest wait as Retry-After.
    const someLimited = longestRefusal(answers, RateLimited);
    return someLimited ? { ...response, headers: { ...response.headers, "Retry-After": String(someLimited.retryAfter) } } : response;
  }

  private answer(answers: readonly Answer[]): GatewayResponse {
    if (!this.batch) return this.silent ? { status: 204, body: undefined } : this.ok(answers[0]!);
    let answered = answers;
    if (this.silent) {
      const silent = this.silent;
      const kept: Answer[] = [];
      for (let i = 0; i < answers.length; i++) if (!silent[i]) kept.push(answers[i]!);
      if (kept.length === 0) return { status: 204, body: undefined };
      answered = kept;
    }
    return this.ok(answered);
  }

  private ok(body: Answer | readonly Answer[]): GatewayResponse {
    if (body instanceof RawJson) return { status: 200, body: body.text };
    const raw = this.rawIds || this.dialect.rawResults || (Array.isArray(body) && body.some((a) => a instanceof RawJson));
    return { status: 200, body: raw ? stringifyWithRaw(body) : body };
  }
}

/** The HTTP answer to a request with one answer and no body to read (the URI form). */
export function respondOne(answer: Answer, dialect: Dialect): GatewayResponse {
  if (answer instanceof RawJson) return { status: 200, body: answer.text };
  if ("error" in answer && answer.error instanceof RateLimited) return tooManyRequests(answer.error);
  const response = { status: 200, body: dialect.rawResults ? stringifyWithRaw(answer) : answer };
  return "error" in answer && answer.error instanceof Unavailable ? serviceUnavailable(response, answer.error) : response;
}

/** The refusal with the longest wait when every answer is a refusal of that kind, undefined otherwise. */
function allRefused<T extends Refused>(answers: readonly Answer[], kind: abstract new (...args: never[]) => T): T | undefined {
  let longest: T | undefined;
  for (const a of answers) {
    if (a instanceof RawJson || !("error" in a) || !(a.error instanceof kind)) return undefined;
    if (!longest || a.error.retryAfter > longest.retryAfter) longest = a.error;
  }
  return longest;
}

/** The refusal of that kind with the longest wait among the answers, undefined when there is none. */
function longestRefusal<T extends Refused>(answers: readonly Answer[], kind: abstract new (...args: never[]) => T): T | undefined {
  let longest: T | undefined;
  for (const a of answers) {
    if (a instanceof RawJson || !("error" in a) || !(a.error instanceof kind)) continue;
    if (!longest || a.error.retryAfter > longest.retryAfter) longest = a.error;
  }
  return longest;
}

/** The answers as they are (JSON-RPC errors), sent with HTTP 503 and Retry-After. */
function serviceUnavailable(response: GatewayResponse, unavailable: Unavailable): GatewayResponse {
  const refusal = unavailable.refusal;
  // Only notifications: nothing to answer them with, so the refusal itself says why.
  if (response.status === 204) return { status: refusal.status, body: refusal.json, headers: refusal.headers };
  return { ...response, status: refusal.status, headers: { ...response.headers, ...refusal.headers } };
}

function tooManyRequests(limited: RateLimited): GatewayResponse {
  let response = refusedResponses.get(limited);
  if (!response) {
    const refusal = limited.refusal;
    refusedResponses.set(limited, (response = Object.freeze({ status: refusal.status, body: refusal.json, headers: refusal.headers })));
  }
  return response;
}

/** The HTTP answer of each refusal (made once, as the refusals are: lib/gateway/limits.ts). */
const refusedResponses = new WeakMap<RateLimited, GatewayResponse>();

/**
 * Takes the throughput an item costs before it runs. Returns the refusal to answer it with when the
 * project's rate limit is reached (the caller meters it as an error of 0 CU), undefined otherwise.
 */
export function chargeItem(ctx: GatewayContext, cu: number): RateLimited | undefined {
  try {
    ctx.charge(cu);
    return undefined;
  } catch (e) {
    if (!(e instanceof AppError && e.code === "TOO_MANY_REQUESTS")) throw e;
    // The limiter makes each refusal once (lib/gateway/limits.ts); so is its JSON-RPC error.
    let limited = rateLimited.get(e);
    if (!limited) rateLimited.set(e, (limited = new RateLimited(e)));
    return limited;
  }
}

const rateLimited = new WeakMap<AppError, RateLimited>();
