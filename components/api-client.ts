/** Client-side helpers for the console API: every error answer is JSON `{ code, message }`. */

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const FALLBACK_MESSAGE = "Something went wrong. Please try again.";

/** What the console says when a request or server action got no answer at all. */
export const UNREACHABLE_MESSAGE = "Could not reach the server. Check your connection and try again.";

export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? "GET",
      headers: init.body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: "same-origin",
      cache: "no-store",
      signal: init.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, "NETWORK_ERROR", UNREACHABLE_MESSAGE);
  }
  let data: unknown = null;
  const text = await res.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const body = (data ?? {}) as { code?: unknown; message?: unknown };
    throw new ApiError(
      res.status,
      typeof body.code === "string" ? body.code : "HTTP_" + res.status,
      typeof body.message === "string" && body.message ? body.message : FALLBACK_MESSAGE,
    );
  }
  return data as T;
}

/** The message to show for anything a request threw. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return FALLBACK_MESSAGE;
}

/** The server prefixes validation messages with the field ("password: ..."); split them off. */
export function fieldOf(error: unknown): { field: string; message: string } | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const m = /^([A-Za-z][\w.]*): (.+)$/s.exec(error.message);
  return m && m[1] && m[2] ? { field: m[1], message: m[2] } : null;
}
