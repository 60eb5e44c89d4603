import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import { chargeItem, failure, parseBody, refuseBody, type Answer, type Body, type Dialect } from "@/lib/jsonrpc/envelope";
import { RawJson } from "@/lib/jsonrpc/raw-json";
import { idStart, numberEnd } from "@/lib/jsonrpc/scan";
import { INTERNAL_ERROR, InvalidRequest, METHOD_NOT_FOUND, RpcError, type ErrorObject, type Id } from "@/lib/jsonrpc/errors";
import { headCacheMs, NoBackend, poolFor } from "./backends";
import { EVM_METHODS, refusal, type MethodInfo } from "./methods";
import { UpstreamUnavailable } from "./upstream";

/** Errors as Ethereum nodes write them: `{ code, message }`, data only when there is some. */
const EVM: Dialect = { messageAsData: false, rawResults: false };

const internalFailure = (id: Id, message: string): Answer => failure(id, { code: INTERNAL_ERROR, message });

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
 * Checks one item and answers it when no node is needed (errors, catalog answers, cached head
 * values); returns the job to forward otherwise.
 */
function prepare(ctx: GatewayContext, body: Body, slot: number): Answer | Job {
  const req = body.request(slot);
  if (req instanceof InvalidRequest) {
    ctx.meter("invalid", 0, true);
    return failure(req.id, req);
  }
  const id = body.id(slot, req);
  const method = req.method;
  const refused = refusal(method, ctx.principal.plan);
  if (refused) {
    // Refused names are counted under one label: callers must not be able to create usage rows at will.
    ctx.meter(Object.hasOwn(EVM_METHODS, method) ? method : "unsupported", 0, true);
    return failure(id, { code: METHOD_NOT_FOUND, message: refused });
  }
  const info = EVM_METHODS[method]!;
  const limited = chargeItem(ctx, info.cu);
  if (limited) {
    ctx.meter(method, 0, true);
    return failure(id, limited);
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

/**
 * Sends the jobs to the network's node in one request (a batch when several) and writes their
 * answers into `answers`, by slot.
 */
async function forward(ctx: GatewayContext, jobs: Job[], answers: Answer[]): Promise<void> {
  const fail = (message: string) => {
    for (const j of jobs) {
      ctx.meter(j.method, 0, true);
      answers[j.slot] = internalFailure(j.id, message);
    }
  };
  // Our own ids upstream (the caller's may repeat or be null); the caller's are restored below.
  const payload = jobs.map((j, i) => ({ jsonrpc: "2.0", id: i, method: j.method, params: j.params }));
  let reply: { answer: unknown; text: string };
  try {
    const pool = await poolFor(ctx.network);
    reply = await pool.exchange(JSON.stringify(payload.length === 1 ? payload[0] : payload), { retryable: jobs.every((j) => !j.info.write) });
  } catch (e) {
    if (e instanceof UpstreamUnavailable) return fail(`Internal error: upstream unreachable for ${ctx.network.slug}: ${e.message}`);
    if (e instanceof NoBackend) return fail(`Internal error: ${e.message}`);
    return fail(`Internal error: the devnet for ${ctx.network.slug} could not be started: ${e instanceof Error ? e.message : String(e)}`);
  }
  const items = Array.isArray(reply.answer) ? reply.answer : [reply.answer];
  const byId = new Map<number, Record<string, unknown>>();
  for (const item of items) {
    if (typeof item === "object" && item !== null && typeof (item as { id?: unknown }).id === "number") byId.set((item as { id: number }).id, item as Record<string, unknown>);
  }
  jobs.forEach((job, i) => {
    // A node that cannot parse a batch answers one error object without an id.
    const answer = byId.get(i) ?? (items.length === 1 && jobs.length === 1 ? (items[0] as Record<string, unknown>) : undefined);
    if (!answer || (!("result" in answer) && !("error" in answer))) {
      ctx.meter(job.method, 0, true);
      answers[job.slot] = internalFailure(job.id, "Internal error: the node returned no answer for this request");
      return;
    }
    if ("error" in answer && answer.error !== undefined && answer.error !== null) {
      ctx.meter(job.method, 0, true);
      answers[job.slot] = failure(job.id, answer.error as ErrorObject);
      return;
    }
    ctx.meter(job.method, job.info.cu, false);
    if (job.info.cache === "head" && Array.isArray(job.params) && job.params.length === 0) {
      headCache.set(`${ctx.network.slug}:${job.method}`, { value: answer.result, expires: performance.now() + headCacheMs(ctx.network) });
    }
    answers[job.slot] = (jobs.length === 1 && passThrough(reply.text, answer, job.id)) || { jsonrpc: "2.0", id: job.id, result: answer.result };
  });
}

/**
 * A single answer as the node wrote it, with the caller's id in place of ours: the node's bytes
 * are already valid JSON (they were parsed), so a large result is not serialised a second time.
 * Undefined when the answer is not of the plain shape this needs (`{"jsonrpc":"2.0","id":0,…}`
 * with the id written as `0`, no error member).
 */
function passThrough(text: string, answer: Record<string, unknown>, id: Id): RawJson | undefined {
  if (answer.id !== 0 || answer.jsonrpc !== "2.0" || "error" in answer) return undefined;
  const start = idStart(text);
  if (start === -1) return undefined;
  const end = numberEnd(text, start);
  if (end !== start + 1 || text.charCodeAt(start) !== 0x30) return undefined;
  const idText = id instanceof RawJson ? id.text : JSON.stringify(id);
  return new RawJson(text.slice(0, start) + idText + text.slice(end));
}

async function handle(ctx: GatewayContext): Promise<GatewayResponse> {
  const body = parseBody(await ctx.body(), EVM);
  if (body instanceof RpcError) {
    ctx.meter("invalid", 0, true);
    return refuseBody(body);
  }
  const answers: Answer[] = [];
  let jobs: Job[] | undefined;
  for (let slot = 0; slot < body.size; slot++) {
    const p = prepare(ctx, body, slot);
    if ("slot" in p) (jobs ??= []).push(p);
    else answers[slot] = p;
  }
  if (jobs) await forward(ctx, jobs, answers);
  return body.respond(answers);
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
