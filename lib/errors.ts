import { isDatabaseUnreachable, OUTAGE_RETRY_AFTER_S, reportDatabaseUnreachable } from "@/lib/db/outage";
import { componentLogger } from "@/lib/log";

/**
 * One error type for the public API and the console API: a code from the table in README.md
 * ("Errors"), its HTTP status, and a message written for the person who made the request.
 */
export const ERROR_STATUS = {
  MISSING_REQUIRED_PARAMETER: 400,
  INVALID_PARAMETER: 400,
  WRONG_RANGE_PARAMETER: 400,
  NO_AUTHENTICATION_FOUND: 401,
  AUTHENTICATION_FAILED: 401,
  PERMISSION_DENIED: 403,
  WRONG_ENDPOINT: 404,
  NOT_SUPPORTED_CHAIN: 404,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TIMEOUT: 408,
  RESOURCE_ALREADY_EXISTS: 409,
  REJECTED: 409,
  CONTENTS_TOO_LARGE: 413,
  TOO_LONG_URI: 414,
  TOO_MANY_REQUESTS: 429,
  EXCEEDED_QUOTA_LIMIT: 429,
  INTERNAL_SERVER_ERROR: 500,
  INTERRUPTED: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  override name = "AppError";
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }

  private text: string | undefined;

  /** The answer's body, `toJSON()` as JSON text: written once, so a refusal made once and reused is not serialised per request. */
  get json(): string {
    return (this.text ??= JSON.stringify(this.toJSON()));
  }
}

/**
 * The answer to a failure caused by an unreachable database: 503 UNAVAILABLE with Retry-After (the
 * outage is logged once, see lib/db/outage.ts). Undefined for any other failure.
 */
export function databaseUnavailable(error: unknown): AppError | undefined {
  if (!isDatabaseUnreachable(error)) return undefined;
  reportDatabaseUnreachable(error);
  return databaseUnavailableError();
}

/** 503 UNAVAILABLE with Retry-After: the answer to what needs the database while it is unreachable. */
export function databaseUnavailableError(): AppError {
  return new AppError("UNAVAILABLE", "The service's database is unreachable at the moment. Please retry shortly.", { "Retry-After": String(OUTAGE_RETRY_AFTER_S) });
}

/** Maps anything thrown to an AppError; unknown errors are logged and answered opaquely. */
export function toAppError(error: unknown, log: (e: unknown) => void = (e) => componentLogger("errors").error({ err: e }, "unexpected error")): AppError {
  if (error instanceof AppError) return error;
  const unavailable = databaseUnavailable(error);
  if (unavailable) return unavailable;
  log(error);
  return new AppError("INTERNAL_SERVER_ERROR", "The server failed to process the request. Please try again.");
}
