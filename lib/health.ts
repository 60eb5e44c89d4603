/**
 * What a load balancer or an orchestrator asks a process: GET /healthz (the process is alive) and
 * GET /readyz (it can do its work now: its database reachable, every migration this build expects
 * applied, its parts running and not stopping), also at their older paths /api/health and
 * /api/ready. Answered by the process's own node:http servers (lib/server.ts) before anything
 * else, so they exist with --api-only and in a worker, and never cached.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import type { LimitsMode } from "@/lib/limits/shared";
import { reportLimitsMode } from "@/lib/metrics";

// The migrations this build expects, recorded by the composition root as it starts (it has just
// read the migrations folder), and how the process's limits count (lib/limits/shared.ts), recorded
// as that changes.
const state: { expected?: readonly string[]; limits?: LimitsMode } = {};

export function setExpectedMigrations(names: readonly string[]): void {
  state.expected = names;
}

export function setLimitsMode(mode: LimitsMode): void {
  state.limits = mode;
  reportLimitsMode(mode);
}

/** Whether limits are shared through Redis or each process enforces its share (local until told otherwise). */
export function limitsMode(): LimitsMode {
  return state.limits ?? "local";
}

/** Why a process's own parts cannot do their work: not started yet (and why), or stopping. */
export type NotReady = { status: "not_ready"; reason: string } | { status: "draining" };

export interface Probes {
  /** The process's parts: undefined while they run. */
  parts: () => NotReady | undefined;
  /** The answer says how limits count (web processes: the limits are theirs). */
  withLimits: boolean;
}

/** Why the database cannot serve this build, or undefined when it can. */
async function databaseNotReady(): Promise<string | undefined> {
  let applied: Set<string>;
  try {
    const rows = await db().$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
    applied = new Set(rows.map((r) => r.migration_name));
  } catch {
    return "database unreachable or not migrated";
  }
  const expected = state.expected;
  if (!expected) return "migrations not checked yet";
  const pending = expected.filter((m) => !applied.has(m));
  return pending.length === 0 ? undefined : `pending migrations: ${pending.join(", ")}`;
}

async function readiness(probes: Probes): Promise<{ status: number; body: object }> {
  const parts = probes.parts();
  if (parts?.status === "draining") return { status: 503, body: parts };
  const reason = parts?.reason ?? (await databaseNotReady());
  const limits: { limits?: LimitsMode } = probes.withLimits ? { limits: limitsMode() } : {};
  return reason === undefined ? { status: 200, body: { status: "ready", ...limits } } : { status: 503, body: { status: "not_ready", reason, ...limits } };
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-store" })
    .end(req.method === "HEAD" ? undefined : text);
}

const LIVENESS = new Set(["/healthz", "/api/health"]);
const READINESS = new Set(["/readyz", "/api/ready"]);

/** Answers the probes' paths (true), leaving any other request to the caller (false). */
export function answerProbe(req: IncomingMessage, res: ServerResponse, probes: Probes): boolean {
  const url = req.url ?? "";
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  const live = LIVENESS.has(path);
  if (!live && !READINESS.has(path)) return false;
  if (req.method !== "GET" && req.method !== "HEAD") {
    const error = new AppError("METHOD_NOT_ALLOWED", "Use GET or HEAD on this endpoint.", { Allow: "GET, HEAD" });
    send(req, res, error.status, error.toJSON(), error.headers);
    return true;
  }
  if (live) {
    send(req, res, 200, { status: "ok" });
    return true;
  }
  readiness(probes).then(
    (r) => send(req, res, r.status, r.body),
    () => send(req, res, 503, { status: "not_ready", reason: "readiness check failed" }),
  );
  return true;
}
