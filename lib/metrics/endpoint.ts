/**
 * GET /metrics: the process's registry (lib/metrics/index.ts) in Prometheus's text format, on the
 * public port (lib/server.ts) and on any listener of the process's own that mounts metricsHandler.
 * Who may read it is metricsAccess's: README.md ("Metrics") says the same.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { constantTimeEqual, sha256Hex } from "@/lib/crypto";
import { getEnv, type Env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { componentLogger } from "@/lib/log";
import { metricsRegistry } from "./index";

export const METRICS_PATH = "/metrics";

/** Who may read /metrics on a listener: anyone, whoever sends the token, or nobody. */
export type MetricsAccess = { kind: "open" } | { kind: "token"; token: string } | { kind: "off" };

/**
 * On the public port (`public`): with METRICS_TOKEN, whoever sends it as a Bearer token; without,
 * anyone in the local default (no DATABASE_URL: `npm start` on one machine) and nobody with
 * DATABASE_URL (a deployment, whose public port faces its users). On a listener of its own
 * (`private`: METRICS_PORT, which only the operator's network should reach): the token when set,
 * else anyone.
 */
export function metricsAccess(listener: "public" | "private", env: Env = getEnv()): MetricsAccess {
  if (env.METRICS_TOKEN !== undefined) return { kind: "token", token: env.METRICS_TOKEN };
  return listener === "private" || env.DATABASE_URL === undefined ? { kind: "open" } : { kind: "off" };
}

const OFF = new AppError(
  "WRONG_ENDPOINT",
  "Metrics are not served on this port when DATABASE_URL is set: set METRICS_TOKEN and send it as Authorization: Bearer <token>, or set METRICS_PORT for a listener of their own.",
);
const UNAUTHORIZED = new AppError("AUTHENTICATION_FAILED", "GET /metrics needs the metrics token (METRICS_TOKEN) as Authorization: Bearer <token>.", { "WWW-Authenticate": 'Bearer realm="metrics"' });
const METHOD = new AppError("METHOD_NOT_ALLOWED", "Use GET on /metrics.", { Allow: "GET, HEAD" });

function refuse(res: ServerResponse, error: AppError): void {
  res.writeHead(error.status, { ...error.headers, "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" }).end(error.json);
}

/** Compares digests, so neither the token's length nor its characters show in the time taken. */
function bearerMatches(req: IncomingMessage, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return match !== null && constantTimeEqual(sha256Hex(match[1]!), sha256Hex(token));
}

/**
 * Answers GET /metrics (any query string) under `access`; false for any other path, which the
 * caller answers. Self-contained: any node:http listener of the process can mount it.
 */
export function metricsHandler(access: MetricsAccess): (req: IncomingMessage, res: ServerResponse) => boolean {
  const log = componentLogger("metrics");
  return (req, res) => {
    const url = req.url ?? "/";
    const end = url.indexOf("?");
    if ((end === -1 ? url : url.slice(0, end)) !== METRICS_PATH) return false;
    if (access.kind === "off") refuse(res, OFF);
    else if (access.kind === "token" && !bearerMatches(req, access.token)) refuse(res, UNAUTHORIZED);
    else if (req.method !== "GET" && req.method !== "HEAD") refuse(res, METHOD);
    else {
      const registry = metricsRegistry();
      registry.metrics().then(
        (text) => res.writeHead(200, { "Content-Type": registry.contentType, "Cache-Control": "no-store" }).end(req.method === "HEAD" ? undefined : text),
        (e: unknown) => {
          log.error({ err: e }, "could not collect the metrics");
          refuse(res, new AppError("INTERNAL_SERVER_ERROR", "The metrics could not be collected."));
        },
      );
    }
    return true;
  };
}
