import { AppError } from "@/lib/errors";

/**
 * What a server action answers. Expected failures (duplicate email, wrong password, plan limit)
 * come back as values with HTTP 200, so the browser console stays free of "Failed to load
 * resource" errors that a 4xx fetch would log.
 */
export type ActionResult<T = null> = { ok: true; data: T } | { ok: false; code: string; message: string; field?: string };

export function ok<T>(data: T): ActionResult<T> {
  return { ok: true, data };
}

/** Maps a thrown error to a failed result; unknown errors are logged and answered opaquely. */
export function failure(error: unknown): { ok: false; code: string; message: string; field?: string } {
  if (error instanceof AppError) {
    // Validation messages are prefixed with the field ("password: Use at least 10 characters").
    const m = /^([A-Za-z][\w.]*): (.+)$/s.exec(error.message);
    if ((error.code === "INVALID_PARAMETER" || error.code === "MISSING_REQUIRED_PARAMETER") && m?.[1] && m[2]) {
      return { ok: false, code: error.code, message: m[2], field: m[1] };
    }
    return { ok: false, code: error.code, message: error.message };
  }
  console.error(error);
  return { ok: false, code: "INTERNAL_SERVER_ERROR", message: "The server failed to process the request. Please try again." };
}
