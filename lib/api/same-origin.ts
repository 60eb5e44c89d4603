import { AppError } from "@/lib/errors";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

function originAllowed(origin: string, publicUrl: string, host: string | null): boolean {
  let url: URL;
  try {
    // "null" (a sandboxed frame, a data: URL) does not parse and is refused.
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.origin === new URL(publicUrl).origin || (host !== null && url.host === host.toLowerCase());
}

/**
 * Why a state-changing console API request must be refused, or null. Browsers send Origin with
 * every cross-origin request and with same-origin POST, PUT, PATCH and DELETE; it must be the
 * console's configured origin (PUBLIC_URL) or the request's own Host. Without Origin, a browser's
 * Sec-Fetch-Site must not say another site; a request with neither header is not a browser's and
 * needs the session cookie anyway. A body must be JSON: the types a cross-site page can send
 * without a CORS preflight (text/plain, forms) are refused whatever their content.
 */
export function crossSiteRefusal(req: Request, publicUrl: string): AppError | null {
  if (!STATE_CHANGING.has(req.method.toUpperCase())) return null;
  const origin = req.headers.get("origin");
  const site = req.headers.get("sec-fetch-site");
  if (origin !== null ? !originAllowed(origin, publicUrl, req.headers.get("host")) : site !== null && site !== "same-origin" && site !== "none") {
    return new AppError("PERMISSION_DENIED", `Cross-site request refused: the console API accepts changes only from pages of ${new URL(publicUrl).origin}.`);
  }
  const type = req.headers.get("content-type");
  const hasBody = type !== null || Number(req.headers.get("content-length") ?? 0) > 0 || req.headers.has("transfer-encoding");
  if (hasBody && type?.split(";")[0]?.trim().toLowerCase() !== "application/json") {
    return new AppError("INVALID_PARAMETER", "Send the request body as JSON, with the header Content-Type: application/json.");
  }
  return null;
}
