import { maxHeaderSize, ServerResponse, STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { databaseOutage, OUTAGE_RETRY_AFTER_S } from "@/lib/db/outage";
import { AppError, databaseUnavailableError } from "@/lib/errors";
import { publicMounts } from "@/lib/gateway/mounts";
import { MAX_URL_LENGTH } from "@/lib/gateway/router";

/**
 * Refusals made by the HTTP layer itself, before a request reaches Next.js, written as the same
 * `{ code, message }` JSON as every other error answer.
 */

const ALLOW = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

function sendError(res: ServerResponse, error: AppError): void {
  const body = error.json;
  res
    .writeHead(error.status, { ...error.headers, "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) })
    .end(body);
}

/**
 * Runs before any routing. Answers `OPTIONS *` (RFC 9110, section 9.3.7: the server's own
 * options) with 204 and Allow; turns an absolute-form target (http://host/path, RFC 9112, section
 * 3.2.2) into its path, the host taken from it; and answers any other target that is not a path
 * with 400. (Next.js throws "Invalid URL" on a target that is not a path, which answered 500.)
 * True when answered.
 */
export function answerNonPathTarget(req: IncomingMessage, res: ServerResponse): boolean {
  const target = req.url ?? "";
  if (target.startsWith("/")) return false;
  if (target === "*" && req.method === "OPTIONS") {
    res.writeHead(204, { Allow: ALLOW }).end();
    return true;
  }
  if (/^https?:\/\//i.test(target) && URL.canParse(target)) {
    const url = new URL(target);
    req.url = `${url.pathname}${url.search}`;
    req.headers.host = url.host;
    return false;
  }
  sendError(res, new AppError("INVALID_PARAMETER", "The request target must be a path starting with / (or * for OPTIONS)."));
  return true;
}

const UNDECODABLE_PATH = "The URL path is not valid percent-encoded UTF-8.";

/**
 * Runs before any routing: a path whose percent-escapes do not decode to UTF-8 (`%ff`, `%E0%A4%A`,
 * a lone `%`) answers 400, as `{ code, message }` on API paths and as a line of text on console
 * pages. (Next.js failed on such paths with 500; the gateway would have read the segment as it is.)
 * The query is left to whoever reads it. True when answered.
 */
export function answerUndecodablePath(req: IncomingMessage, res: ServerResponse): boolean {
  const target = req.url ?? "/";
  if (!target.includes("%")) return false;
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    // Answered below.
  }
  // Answers are JSON under the console API and the public API's mounts.
  const first = path.split("/", 2)[1] ?? "";
  const publicPath = publicMounts().some((m) => m.prefix === first);
  if (publicPath || first === "api") {
    const error = new AppError("INVALID_PARAMETER", UNDECODABLE_PATH);
    if (publicPath) res.setHeader("Access-Control-Allow-Origin", "*");
    sendError(res, error);
    return true;
  }
  const body = `Bad request: ${UNDECODABLE_PATH}\n`;
  res.writeHead(400, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(body), "X-Content-Type-Options": "nosniff" }).end(req.method === "HEAD" ? "" : body);
  return true;
}

/** Before Next.js: a URL longer than MAX_URL_LENGTH answers 414, as the gateway does for its paths. */
export function answerLongUrl(req: IncomingMessage, res: ServerResponse): boolean {
  if ((req.url ?? "").length <= MAX_URL_LENGTH) return false;
  sendError(res, new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`));
  return true;
}

/**
 * Whether the parser gave up inside the request line: the packet it was reading starts with a
 * method, and the parser stopped before that line's end. (A request whose head came in several
 * packets may not show it, and is answered 431 like over-long headers.)
 */
function overflowInRequestLine(packet: unknown, bytesParsed: unknown): boolean {
  if (!Buffer.isBuffer(packet) || typeof bytesParsed !== "number") return false;
  if (!/^[A-Z]+ /.test(packet.subarray(0, 24).toString("latin1"))) return false;
  const lineEnd = packet.indexOf(0x0a);
  return lineEnd === -1 || bytesParsed <= lineEnd;
}

/** The answer to a request node:http could not parse, and its status (431 has no code of its own). */
function parseRefusal(code: unknown, packet: unknown, bytesParsed: unknown): { status: number; refusal: AppError } {
  const plain = (refusal: AppError) => ({ status: refusal.status, refusal });
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      if (overflowInRequestLine(packet, bytesParsed)) {
        return plain(new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`));
      }
      // The error table has no code for 431; CONTENTS_TOO_LARGE names the problem.
      return { status: 431, refusal: new AppError("CONTENTS_TOO_LARGE", `The request's URL and headers are larger than ${maxHeaderSize} bytes together.`) };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return plain(new AppError("CONTENTS_TOO_LARGE", "The request's chunk extensions are too large."));
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return plain(new AppError("TIMEOUT", "The request was not received in time."));
    default:
      return plain(new AppError("INVALID_PARAMETER", "The request is not valid HTTP/1.1."));
  }
}

/**
 * The server's 'clientError' handler: node:http calls it when a request cannot be parsed (header
 * section over maxHeaderSize, malformed HTTP, request timeout) instead of writing its own
 * bodiless answer. There is no response object, so the answer is written to the socket directly,
 * and only when no answer to an earlier request on the connection has begun.
 */
export function answerClientError(error: Error, socket: Duplex): void {
  const code = "code" in error ? error.code : undefined;
  const inFlight = "_httpMessage" in socket ? socket._httpMessage : null;
  if (code === "ECONNRESET" || !socket.writable || (inFlight instanceof ServerResponse && inFlight.headersSent)) {
    socket.destroy();
    return;
  }
  const { status, refusal } = parseRefusal(code, "rawPacket" in error ? error.rawPacket : undefined, "bytesParsed" in error ? error.bytesParsed : undefined);
  const body = refusal.json;
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * Paths that pass during an outage too: files Next.js serves (no database needed). (The probes,
 * which say themselves what they see, are answered before.)
 */
const PASS_DURING_OUTAGE = /^\/(?:_next\/static\/|[^/?]+\.[a-z0-9]+(?:\?|$)|icon(?:\?|$))/i;

const OUTAGE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${OUTAGE_RETRY_AFTER_S}"><title>Blockgate is briefly unavailable</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;min-height:100vh;display:grid;place-items:center;background:#0b0d12;color:#e6e8ee}main{max-width:28rem;padding:2rem;text-align:center}p{color:#9aa3b2}</style>
</head><body><main><h1>Briefly unavailable</h1>
<p>The console cannot reach its database at the moment. This page reloads by itself every ${OUTAGE_RETRY_AFTER_S} seconds; nothing you saved is lost.</p>
</main></body></html>`;

/**
 * Before Next.js, while this process knows the database is unreachable (lib/db/outage.ts): console
 * pages answer a small self-reloading 503 page, console API routes the `{ code, message }` 503,
 * both with Retry-After, instead of each rendering an error (and logging it) inside Next.js.
 * Static assets still pass. True when answered.
 */
export function answerDuringOutage(req: IncomingMessage, res: ServerResponse): boolean {
  if (!databaseOutage()) return false;
  const path = req.url ?? "/";
  if (PASS_DURING_OUTAGE.test(path)) return false;
  if (path.startsWith("/api/")) {
    sendError(res, databaseUnavailableError());
    return true;
  }
  const body = req.method === "HEAD" ? "" : OUTAGE_PAGE;
  res
    .writeHead(503, {
      "Retry-After": String(OUTAGE_RETRY_AFTER_S),
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "Content-Length": Buffer.byteLength(OUTAGE_PAGE),
    })
    .end(body);
  return true;
}
