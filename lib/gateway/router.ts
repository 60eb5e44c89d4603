import type { IncomingMessage, ServerResponse } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { db } from "@/lib/db/client";
import { AppError, toAppError } from "@/lib/errors";
import { randomBytes } from "node:crypto";
import { cacheGet, cacheSet, type KeyPrincipal } from "@/lib/keys/cache";
import { hashKey, looksLikeKey } from "@/lib/keys/secret";
import { networkByPath, networkBySlug, type Network } from "@/lib/networks";
import type { UsageMeter } from "@/lib/usage/meter";
import { RateLimiter } from "./limits";
import { QuotaTracker } from "./quota";
import type { GatewayContext, GatewayResponse, Mount, RouteMatch } from "./types";

export const MAX_URL_LENGTH = 8192;
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const CORS_HEADERS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "X-Request-Id, Retry-After",
};

export interface GatewayOptions {
  mounts: readonly Mount[];
  meter: UsageMeter;
  keyCacheTtlMs: number;
  log?: (msg: string) => void;
}

export type GatewayHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

// Request ids: a random per-process prefix and a counter; unique across processes and cheap
// on the hot path (no randomness or big-number arithmetic per request).
const processTag = randomBytes(6).toString("base64url");
let requestCounter = 0;
const nextRequestId = () => `req_${processTag}${(++requestCounter).toString(36).padStart(6, "0")}`;

function send(res: ServerResponse, requestId: string, response: GatewayResponse): void {
  const body =
    typeof response.body === "string" || Buffer.isBuffer(response.body) ? response.body : JSON.stringify(response.body);
  const headers: Record<string, string | number> = {
    ...CORS_HEADERS,
    "X-Request-Id": requestId,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    ...response.headers,
  };
  res.writeHead(response.status, headers);
  res.end(body);
}

function sendError(res: ServerResponse, requestId: string, error: AppError): void {
  send(res, requestId, { status: error.status, body: error.toJSON(), headers: error.headers });
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > limit) {
      req.resume();
      reject(new AppError("CONTENTS_TOO_LARGE", `The request body is larger than ${limit} bytes.`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume();
        reject(new AppError("CONTENTS_TOO_LARGE", `The request body is larger than ${limit} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on("error", () => reject(new AppError("INTERRUPTED", "The request was interrupted while its body was being read.")));
  });
}

/** Resolves a key to its project, through the verification cache (which also remembers misses). */
async function resolveKey(secret: string, ttlMs: number): Promise<KeyPrincipal> {
  if (!looksLikeKey(secret)) throw new AppError("AUTHENTICATION_FAILED", "The API key is invalid.");
  const hash = hashKey(secret);
  const now = Date.now();
  let principal = cacheGet(hash, now);
  if (principal === undefined) {
    const row = await db().apiKey.findUnique({
      where: { hash },
      select: { id: true, hash: true, projectId: true, project: { select: { plan: true } } },
    });
    // The index lookup found the row by hash; compare again in constant time before trusting it.
    principal =
      row && timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash))
        ? { keyId: row.id, projectId: row.projectId, plan: row.project.plan }
        : null;
    cacheSet(hash, principal, ttlMs, now);
  }
  if (!principal) throw new AppError("AUTHENTICATION_FAILED", "The API key is invalid or has been reset.");
  return principal;
}

function keyFromRequest(req: IncomingMessage, pathKey: string | undefined): string {
  const header = req.headers["x-api-key"];
  const headerKey = Array.isArray(header) ? header.join(",") : header;
  if (headerKey !== undefined && pathKey !== undefined) {
    throw new AppError("AUTHENTICATION_FAILED", "Give the API key either in the X-API-KEY header or in the path, not both.");
  }
  const key = headerKey ?? pathKey;
  if (key === undefined || key === "") {
    throw new AppError("NO_AUTHENTICATION_FOUND", "No API key was given. Send it in the X-API-KEY header.");
  }
  return key;
}

function resolveNetwork(mount: Mount, match: RouteMatch): Network {
  const n =
    "slug" in match.network ? networkBySlug(match.network.slug) : networkByPath(match.network.protocol, match.network.network);
  if (!n || !mount.families.includes(n.family)) {
    const name = "slug" in match.network ? match.network.slug : `${match.network.protocol}/${match.network.network}`;
    throw new AppError("NOT_SUPPORTED_CHAIN", `The network "${name.slice(0, 100)}" is not supported on /${mount.prefix}.`);
  }
  return n;
}

/**
 * The public API router: `/rpc/...`, `/node/...` and `/v1/...`. Returns false for any other path,
 * which the caller hands to Next.js. Every route goes through the same steps: match, CORS,
 * method, key, network, limits, handler, metering; every failure is `{ code, message }`.
 */
export function createGateway(options: GatewayOptions): GatewayHandler {
  const mounts = new Map(options.mounts.map((m) => [m.prefix, m]));
  const limiter = new RateLimiter();
  const quota = new QuotaTracker();
  const log = options.log ?? ((m: string) => console.error(m));

  async function handle(req: IncomingMessage, res: ServerResponse, mount: Mount, segments: string[], requestId: string) {
    const match = mount.match(segments);
    if (!match) throw new AppError("WRONG_ENDPOINT", `There is no endpoint at ${req.url?.split("?")[0]?.slice(0, 200)}.`);
    const allowed = match.endpoint.methods;
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        ...CORS_HEADERS,
        "X-Request-Id": requestId,
        "Access-Control-Allow-Methods": [...allowed, "OPTIONS"].join(", "),
        "Access-Control-Allow-Headers": "Content-Type, X-API-KEY",
        "Access-Control-Max-Age": "86400",
      });
      res.end();
      return;
    }
    if (!allowed.includes(req.method ?? "")) {
      throw new AppError("METHOD_NOT_ALLOWED", `Use ${allowed.join(" or ")} on this endpoint.`, { Allow: allowed.join(", ") });
    }
    const principal = await resolveKey(keyFromRequest(req, match.pathKey), options.keyCacheTtlMs);
    const network = resolveNetwork(mount, match);
    await quota.check(principal.projectId, principal.plan);
    let metered = false;
    const ctx: GatewayContext = {
      req,
      url: new URL(req.url ?? "/", "http://gateway"),
      requestId,
      network,
      principal,
      body: (limit = DEFAULT_BODY_LIMIT) => readBody(req, limit),
      charge: (cu) => limiter.take(principal.projectId, principal.plan, cu),
      meter: (endpoint, cu, error) => {
        metered = true;
        if (!error) quota.add(principal.projectId, cu);
        options.meter.record({ projectId: principal.projectId, keyId: principal.keyId, network: network.slug, endpoint, cu: error ? 0 : cu, error });
      },
    };
    let response: GatewayResponse;
    try {
      response = await match.endpoint.handle(ctx);
    } catch (e) {
      // Failures after authentication count as requests (errors are free of CU).
      if (!metered) ctx.meter(segments.at(-1) ?? mount.prefix, 0, true);
      throw e;
    }
    send(res, requestId, response);
  }

  return (req, res) => {
    const url = req.url ?? "/";
    const end = url.indexOf("/", 1);
    const prefix = url.slice(1, end === -1 ? url.search(/[?#]|$/) : end) as Mount["prefix"];
    const mount = mounts.get(prefix);
    if (!mount) return false;
    const requestId = nextRequestId();
    if (url.length > MAX_URL_LENGTH) {
      req.resume();
      sendError(res, requestId, new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`));
      return true;
    }
    const path = url.split("?", 1)[0]!;
    const segments = path
      .split("/")
      .slice(2)
      .filter((s) => s !== "")
      .map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
    handle(req, res, mount, segments, requestId).catch((e: unknown) => {
      const error = toAppError(e, (err) => log(`[gateway] ${requestId} ${String(err instanceof Error ? err.stack : err)}`));
      if (res.headersSent) {
        res.destroy();
        return;
      }
      req.resume();
      sendError(res, requestId, error);
    });
    return true;
  };
}
