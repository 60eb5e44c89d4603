import { z } from "zod";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { networkBySlug } from "@/lib/networks";
import { getProjectForUser } from "@/lib/projects/service";
import { parseQuery, queryInput } from "@/lib/validation";
import { REQUEST_LOG_ROWS, type RequestLogColumns } from "./request-log";

/** The public APIs a request can come through, as the request log names them. */
export const INTERFACES = ["rpc", "cometbft", "node", "aptos", "v1"] as const;
export const STATUS_CLASSES = ["2xx", "4xx", "5xx", "rpc_error", "failed"] as const;
/** The recent-traffic window. */
export const TRAFFIC_WINDOW_MS = 5 * 60_000;

const QUERY = z
  .object({
    interface: z.enum(INTERFACES, { error: `use one of ${INTERFACES.join(", ")}` }).optional(),
    network: z
      .string()
      .max(100, { error: "unknown network" })
      .refine((s) => networkBySlug(s) !== undefined, { error: "unknown network (use a slug such as ethereum-mainnet)" })
      .optional(),
    status: z.enum(STATUS_CLASSES, { error: `use one of ${STATUS_CLASSES.join(", ")}` }).optional(),
    method: z
      .string()
      .min(1, { error: "give a method name" })
      .max(100, { error: "at most 100 characters" })
      .regex(/^[\w.:/{}-]+$/, { error: "letters, digits and . _ : / { } - only" })
      .optional(),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, { error: `a whole number from 1 to ${REQUEST_LOG_ROWS}` })
      .transform(Number)
      .refine((n) => n >= 1 && n <= REQUEST_LOG_ROWS, { error: `a whole number from 1 to ${REQUEST_LOG_ROWS}` })
      .default(100),
    before: z
      .string()
      .regex(/^\d{1,18}$/, { error: "the id of a row of this log" })
      .optional(),
  })
  .strict();

export type RequestQuery = z.output<typeof QUERY>;

const NO_PARAMETERS = z.strictObject({});

/** Validates the request log's query string: 400 INVALID_PARAMETER naming the parameter. */
export function parseRequestQuery(params: Record<string, string>): RequestQuery {
  return parseQuery(QUERY, params);
}

export interface RequestRow {
  id: string;
  requestId: string;
  at: string;
  interface: string;
  network: string;
  method: string;
  calls: number;
  status: number;
  statusClass: string;
  latencyMs: number;
  cu: number;
  keyId: string;
  /** Null when the key was deleted since. */
  keyName: string | null;
}

export interface RequestDetails extends RequestRow {
  /** Method and path, key masked. */
  path: string;
  /** The first 2 KB of the request body, secrets masked. */
  params: string;
  /** The first 2 KB of the answer, secrets masked. */
  result: string;
}

interface DbRow extends RequestLogColumns {
  id: bigint;
  at: Date;
  key_name: string | null;
  path?: string;
  params?: string;
  result?: string;
}

const COLUMNS = `r.id, r.request_id, r.at, r.api, r.network, r.method, r.calls, r.status, r.status_class, r.latency_ms, r.cu, r.key_id, k.name AS key_name`;

function toRow(r: DbRow): RequestRow {
  return {
    id: r.id.toString(),
    requestId: r.request_id,
    at: r.at.toISOString(),
    interface: r.api,
    network: r.network,
    method: r.method,
    calls: r.calls,
    status: r.status,
    statusClass: r.status_class,
    latencyMs: r.latency_ms,
    cu: r.cu,
    keyId: r.key_id,
    keyName: r.key_name,
  };
}

/** The newest logged requests of a project matching the filters, newest first. */
export async function listRequests(projectId: string, q: RequestQuery): Promise<RequestRow[]> {
  const values: unknown[] = [projectId];
  const where = ["r.project_id = $1"];
  const add = (sql: (p: string) => string, v: unknown) => {
    values.push(v);
    where.push(sql(`$${values.length}`));
  };
  if (q.interface) add((p) => `r.api = ${p}`, q.interface);
  if (q.network) add((p) => `r.network = ${p}`, q.network);
  if (q.method) add((p) => `r.method = ${p}`, q.method);
  if (q.status === "failed") where.push(`r.status_class <> '2xx'`);
  else if (q.status) add((p) => `r.status_class = ${p}`, q.status);
  if (q.before) add((p) => `r.id < ${p}::bigint`, q.before);
  values.push(q.limit);
  const rows = await db().$queryRawUnsafe<DbRow[]>(
    `SELECT ${COLUMNS} FROM request_logs r LEFT JOIN api_keys k ON k.id = r.key_id
     WHERE ${where.join(" AND ")} ORDER BY r.id DESC LIMIT $${values.length}`,
    ...values,
  );
  return rows.map(toRow);
}

/** One logged request with its excerpts; 404 when it is not (or no longer) in the project's log. */
export async function requestDetails(projectId: string, id: string): Promise<RequestDetails> {
  if (!/^\d{1,18}$/.test(id)) throw new AppError("RESOURCE_NOT_FOUND", "No such request in this project's log.");
  const rows = await db().$queryRawUnsafe<DbRow[]>(
    `SELECT ${COLUMNS}, r.path, r.params, r.result FROM request_logs r LEFT JOIN api_keys k ON k.id = r.key_id
     WHERE r.project_id = $1 AND r.id = $2::bigint`,
    projectId,
    id,
  );
  const r = rows[0];
  if (!r) throw new AppError("RESOURCE_NOT_FOUND", "No such request in this project's log (it may have been rotated out: the log keeps the last 1,000).");
  return { ...toRow(r), path: r.path ?? "", params: r.params ?? "", result: r.result ?? "" };
}

export interface TrafficStats {
  requests: number;
  failed: number;
  /** Milliseconds; null without requests. */
  latency: { avg: number | null; median: number | null; min: number | null; max: number | null };
}

export interface TrafficSummary {
  from: string;
  to: string;
  total: TrafficStats;
  /** Every interface, with zeros for those not used in the window. */
  interfaces: Record<(typeof INTERFACES)[number], TrafficStats>;
  /**
   * False when the log no longer holds every request of the window (it keeps the last 1,000 per
   * project): the numbers then cover `coveredFrom` to `to`.
   */
  complete: boolean;
  coveredFrom: string;
}

interface StatsRow {
  api: string | null;
  requests: number;
  failed: number;
  avg: number | null;
  median: number | null;
  min: number | null;
  max: number | null;
}

const round = (v: number | null) => (v === null ? null : Math.round(Number(v) * 100) / 100);

/** The last 5 minutes of a project, from the request log: requests, failures and latency per interface and in all. */
export async function trafficSummary(projectId: string, now = Date.now()): Promise<TrafficSummary> {
  const from = new Date(now - TRAFFIC_WINDOW_MS);
  const to = new Date(now);
  const [rows, extent] = await Promise.all([
    db().$queryRawUnsafe<StatsRow[]>(
      `SELECT api, count(*)::int AS requests, (count(*) FILTER (WHERE status_class <> '2xx'))::int AS failed,
              avg(latency_ms)::float8 AS avg, (percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::float8 AS median,
              min(latency_ms)::float8 AS min, max(latency_ms)::float8 AS max
       FROM request_logs WHERE project_id = $1 AND at >= $2 AND at <= $3
       GROUP BY GROUPING SETS ((api), ())`,
      projectId,
      from,
      to,
    ),
    db().$queryRawUnsafe<{ rows: number; oldest: Date | null }[]>(`SELECT count(*)::int AS rows, min(at) AS oldest FROM request_logs WHERE project_id = $1`, projectId),
  ]);
  const stats = (r: StatsRow | undefined): TrafficStats => ({
    requests: r?.requests ?? 0,
    failed: r?.failed ?? 0,
    latency: { avg: round(r?.avg ?? null), median: round(r?.median ?? null), min: round(r?.min ?? null), max: round(r?.max ?? null) },
  });
  const interfaces = Object.fromEntries(INTERFACES.map((api) => [api, stats(rows.find((r) => r.api === api))])) as TrafficSummary["interfaces"];
  const oldest = extent[0]?.oldest ?? null;
  const complete = (extent[0]?.rows ?? 0) < REQUEST_LOG_ROWS || oldest === null || oldest <= from;
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    total: stats(rows.find((r) => r.api === null)),
    interfaces,
    complete,
    coveredFrom: (complete || oldest === null ? from : oldest).toISOString(),
  };
}

const noStore = { "Cache-Control": "no-store" };

/** `GET /api/projects/<id>/requests`: another user's project is 404, a bad filter 400. */
export async function requestsApiResponse(userId: string, projectId: string, url: URL): Promise<Response> {
  const project = await getProjectForUser(userId, projectId);
  const query = parseRequestQuery(queryInput(url.searchParams));
  return Response.json({ requests: await listRequests(project.id, query), retention: REQUEST_LOG_ROWS }, { headers: noStore });
}

/** `GET /api/projects/<id>/requests/<rowId>`: one request with its masked excerpts. */
export async function requestDetailsApiResponse(userId: string, projectId: string, id: string): Promise<Response> {
  const project = await getProjectForUser(userId, projectId);
  return Response.json(await requestDetails(project.id, id), { headers: noStore });
}

/** `GET /api/projects/<id>/traffic`: the 5-minute summary. */
export async function trafficApiResponse(userId: string, projectId: string, url: URL, now = Date.now()): Promise<Response> {
  const project = await getProjectForUser(userId, projectId);
  parseQuery(NO_PARAMETERS, queryInput(url.searchParams));
  return Response.json(await trafficSummary(project.id, now), { headers: noStore });
}
