import { AppError } from "@/lib/errors";
import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import { headCacheMs, NoBackend, poolFor } from "./backends";
import { EVM_METHODS, refusal, type MethodInfo } from "./methods";
import { UpstreamUnavailable } from "./upstream";

export const MAX_BATCH = 100;

type Id = string | number | null;
interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}
type RpcResponse = { jsonrpc: "2.0"; id: Id } & ({ result: unknown } | { error: RpcError });

const rpcError = (id: Id, code: number, message: string): RpcResponse => ({ jsonrpc: "2.0", id, error: { code, message } });

function isValidId(id: unknown): id is Id {
  return id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** A request that goes to a node: its position in the batch, method and params. */
interface Job {
  slot: number;
  id: Id;
  method: string;
  info: MethodInfo;
  params: unknown;
}

// Head-dependent answers (eth_blockNumber, fees) reused for a fraction of the block time.
const headCache = new Map<string, { value: unknown; expires: number }>();

/**
 * Validates one item and answers it when no node is needed (errors, catalog answers, cached head
 * values); returns the job to forward otherwise.
 */
function prepare(ctx: GatewayContext, item: unknown, slot: number): RpcResponse | Job {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    ctx.meter("invalid", 0, true);
    return rpcError(null, -32600, "Invalid Request: expected a JSON-RPC 2.0 request object");
  }
  const req = item as Record<string, unknown>;
  const id: Id = isValidId(req.id) ? req.id : null;
  const invalid = (message: string, withId = id) => {
    ctx.meter("invalid", 0, true);
    return rpcError(withId, -32600, `Invalid Request: ${message}`);
  };
  if (req.jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"');
  if (req.id !== undefined && !isValidId(req.id)) return invalid('"id" must be a string, a number or null', null);
  if (typeof req.method !== "string" || req.method === "") return invalid('"method" must be a non-empty string');
  if (req.params !== undefined && (typeof req.params !== "object" || req.params === null)) return invalid('"params" must be an array or an object');
  const method = req.method;
  const refused = refusal(method, ctx.principal.plan);
  if (refused) {
    // Refused names are counted under one label: callers must not be able to create usage rows at will.
    ctx.meter(Object.hasOwn(EVM_METHODS, method) ? method : "unsupported", 0, true);
    return rpcError(id, -32601, refused);
  }
  const info = EVM_METHODS[method]!;
  try {
    ctx.charge(info.cu);
  } catch (e) {
    ctx.meter(method, 0, true);
    if (e instanceof AppError) return { jsonrpc: "2.0", id, error: { code: -32005, message: e.message } };
    throw e;
  }
  if (info.local) {
    const chainId = ctx.network.activeChainId;
    ctx.meter(method, info.cu, false);
    const result = info.local === "chainId" ? `0x${Number(chainId).toString(16)}` : info.local === "netVersion" ? String(chainId) : [];
    return { jsonrpc: "2.0", id, result };
  }
  if (info.cache === "head" && (req.params === undefined || (Array.isArray(req.params) && req.params.length === 0))) {
    const hit = headCache.get(`${ctx.network.slug}:${method}`);
    if (hit && hit.expires > performance.now()) {
      ctx.meter(method, info.cu, false);
      return { jsonrpc: "2.0", id, result: hit.value };
    }
  }
  return { slot, id, method, info, params: req.params ?? [] };
}

/** Sends the jobs to the network's node in one request (a batch when several) and maps the answers back. */
async function forward(ctx: GatewayContext, jobs: Job[]): Promise<Map<number, RpcResponse>> {
  const answers = new Map<number, RpcResponse>();
  const fail = (message: string) => {
    for (const j of jobs) {
      ctx.meter(j.method, 0, true);
      answers.set(j.slot, rpcError(j.id, -32603, message));
    }
    return answers;
  };
  // Our own ids upstream (the caller's may repeat or be null); the caller's are restored below.
  const payload = jobs.map((j, i) => ({ jsonrpc: "2.0", id: i, method: j.method, params: j.params }));
  let reply: unknown;
  try {
    const pool = await poolFor(ctx.network);
    reply = await pool.send(JSON.stringify(payload.length === 1 ? payload[0] : payload), { retryable: jobs.every((j) => !j.info.write) });
  } catch (e) {
    if (e instanceof UpstreamUnavailable) return fail(`Internal error: upstream unreachable for ${ctx.network.slug}: ${e.message}`);
    if (e instanceof NoBackend) return fail(`Internal error: ${e.message}`);
    return fail(`Internal error: the devnet for ${ctx.network.slug} could not be started: ${e instanceof Error ? e.message : String(e)}`);
  }
  const items = Array.isArray(reply) ? reply : [reply];
  const byId = new Map<number, Record<string, unknown>>();
  for (const item of items) {
    if (typeof item === "object" && item !== null && typeof (item as { id?: unknown }).id === "number") byId.set((item as { id: number }).id, item as Record<string, unknown>);
  }
  jobs.forEach((job, i) => {
    // A node that cannot parse a batch answers one error object without an id.
    const answer = byId.get(i) ?? (items.length === 1 && jobs.length === 1 ? (items[0] as Record<string, unknown>) : undefined);
    if (!answer || (!("result" in answer) && !("error" in answer))) {
      ctx.meter(job.method, 0, true);
      answers.set(job.slot, rpcError(job.id, -32603, "Internal error: the node returned no answer for this request"));
      return;
    }
    if ("error" in answer && answer.error !== undefined && answer.error !== null) {
      ctx.meter(job.method, 0, true);
      answers.set(job.slot, { jsonrpc: "2.0", id: job.id, error: answer.error as RpcError });
      return;
    }
    ctx.meter(job.method, job.info.cu, false);
    if (job.info.cache === "head" && Array.isArray(job.params) && job.params.length === 0) {
      headCache.set(`${ctx.network.slug}:${job.method}`, { value: answer.result, expires: performance.now() + headCacheMs(ctx.network) });
    }
    answers.set(job.slot, { jsonrpc: "2.0", id: job.id, result: answer.result });
  });
  return answers;
}

async function handle(ctx: GatewayContext): Promise<GatewayResponse> {
  const raw = await ctx.body();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32700, "Parse error: the body is not valid JSON") };
  }
  const batch = Array.isArray(parsed);
  const items: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  if (batch && items.length === 0) {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32600, "Invalid Request: the batch is empty") };
  }
  if (items.length > MAX_BATCH) {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32600, `Invalid Request: a batch holds at most ${MAX_BATCH} requests`) };
  }
  const prepared = items.map((item, slot) => prepare(ctx, item, slot));
  const jobs = prepared.filter((p): p is Job => "slot" in p);
  const forwarded = jobs.length > 0 ? await forward(ctx, jobs) : undefined;
  const answers = prepared.map((p) => ("slot" in p ? forwarded!.get(p.slot)! : p));
  return { status: 200, body: batch ? answers : answers[0] };
}

const nodeEndpoint: Endpoint = { methods: ["POST"], handle };

/** `/node/<protocol>-<network>` and `/node/<protocol>-<network>/<API_KEY>`. */
export const nodeMount: Mount = {
  prefix: "node",
  families: ["evm"],
  match(segments) {
    if (segments.length === 1) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint };
    if (segments.length === 2) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint, pathKey: segments[1]! };
    return undefined;
  },
};
