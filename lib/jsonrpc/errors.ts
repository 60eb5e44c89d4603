import type { AppError } from "@/lib/errors";
import type { RawJson } from "./raw-json";

// The error codes of JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object).
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** The first of the range JSON-RPC leaves to the server's own errors (−32000 to −32099): CometBFT's "Server error". */
export const SERVER_ERROR = -32000;
/** "Limit exceeded", the code Ethereum nodes and providers answer a rate limit with (EIP-1474). */
export const LIMIT_EXCEEDED = -32005;

/** "Resource unavailable" (EIP-1474): what the request needs cannot be reached now; retry later. */
export const RESOURCE_UNAVAILABLE = -32002;

/** A batch item not run because the batch used up its time budget (a server error of JSON-RPC's −32000..−32099 range). */
export const BATCH_BUDGET_USED = -32001;

/** The codes the specification defines; a node's other codes are its own. */
export const STANDARD_CODES: ReadonlySet<number> = new Set([PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR]);

/** A request id as answered: the caller's value, or its own text when the value would not serialise back to it. */
export type Id = string | number | null | RawJson;

/** The error member of an answer as a node sent it. */
export interface ErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error: thrown by the code that answers a method, written into the answer as `{ code, message, data? }`. */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toJSON(): ErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** A request object that breaks JSON-RPC 2.0, with the id it is answered with (null when it could not be read). */
export class InvalidRequest extends RpcError {
  override name = "InvalidRequest";
  constructor(
    readonly id: Id,
    message: string,
    data?: unknown,
  ) {
    super(INVALID_REQUEST, message, data);
  }
}

/** A request refused before it ran, for a reason that passes: answered with when to retry. */
export abstract class Refused extends RpcError {
  readonly retryAfter: number;
  constructor(
    code: number,
    readonly refusal: AppError,
  ) {
    const retryAfter = Math.max(1, Number(refusal.headers["Retry-After"]) || 1);
    super(code, refusal.message, { retryAfter });
    this.retryAfter = retryAfter;
  }
}

/**
 * A request the project's rate limit refused before it ran. Inside a batch that others ran in, it is
 * answered −32005 with `data: { retryAfter }` (seconds); when no item of the request ran, the whole
 * request is answered with `refusal`, HTTP 429 TOO_MANY_REQUESTS and its Retry-After header.
 */
export class RateLimited extends Refused {
  override name = "RateLimited";
  constructor(refusal: AppError) {
    super(LIMIT_EXCEEDED, refusal);
  }
}

/**
 * A request that could not run because the service's database is unreachable (`refusal` is the
 * 503 UNAVAILABLE). Answered −32002 with `data: { retryAfter }`; when it is the answer to every
 * item of the request, the answer goes out with HTTP 503 and Retry-After.
 */
export class Unavailable extends Refused {
  override name = "Unavailable";
  constructor(refusal: AppError) {
    super(RESOURCE_UNAVAILABLE, refusal);
  }
}

/** Invalid params; `detail` (the message without its prefix) is the data. */
export const invalidParams = (detail: string) => new RpcError(INVALID_PARAMS, `Invalid params: ${detail}`, detail);

/** A failure of the method itself (a height out of range, a missing transaction), its message as data too. */
export const internalError = (detail: string) => new RpcError(INTERNAL_ERROR, detail, detail);
