import { toAppError, type ErrorCode } from "@/lib/errors";
import { componentLogger, errorMessage } from "@/lib/log";

/**
 * What a server action answers. Expected failures (duplicate email, wrong password, plan limit)
 * come back as values with HTTP 200, so the browser console stays free of "Failed to load
 * resource" errors that a 4xx fetch would log.
 */
export type ActionFailure = { ok: false; code: ErrorCode; message: string; field?: string };
export type ActionResult<T = null> = { ok: true; data: T } | ActionFailure;

export function ok<T>(data: T): ActionResult<T> {
  return { ok: true, data };
}

/** Maps a thrown error (or an AppError made for the answer) to a failed result; unknown errors are logged and answered opaquely. */
export function failure(error: unknown): ActionFailure {
  const { code, message } = toAppError(error, (e) => componentLogger("console").error({ err: e }, `server action failed: ${errorMessage(e)}`));
  // Validation messages are prefixed with the field ("password: Use at least 10 characters").
  const m = /^([A-Za-z][\w.]*): (.+)$/s.exec(message);
  if ((code === "INVALID_PARAMETER" || code === "MISSING_REQUIRED_PARAMETER") && m?.[1] && m[2]) {
    return { ok: false, code, message: m[2], field: m[1] };
  }
  return { ok: false, code, message };
}
