import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import { chargeItem, failure, parseBody, refuseBody, type Answer, type Body, type Dialect } from "@/lib/jsonrpc/envelope";
import { RawJson } from "@/lib/jsonrpc/raw-json";
import { INTERNAL_ERROR, InvalidRequest, METHOD_NOT_FOUND, RpcError, type ErrorObject, type Id } from "@/lib/jsonrpc/errors";
import { services } from "@/lib/services";
import { NoBackend } from "./backends";
import { EVM_METHODS, refusal, type MethodInfo } from "./methods";
import { UpstreamUnavailable, type NodeAnswer } from "./upstream";

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
 * Sends the jobs to the network's node and writes their answers into `answers`, by slot: a single
 * read goes with the other single reads of the moment (EvmUpstream.call), a batch or a write alone.
 */
async function forward(ctx: GatewayContext, jobs: Job[], answers: Answer[]): Promise<void> {
  const fail = (message: string) => {
    for (const j of jobs) {
      ctx.meter(j.method, 0, true);
      answers[j.slot] = internalFailure(j.id, message);
    }
  };
  const backends = services().evm;
  let byId: Array<NodeAnswer | undefined>;
  try {
    const pool = await backends.poolFor(ctx.network);
    const job = jobs[0]!;
    if (jobs.length === 1 && !job.info.write && !job.info.alone) {
      byId = [await pool.call(job.method, job.params)];
    } else {
      // Our own ids upstream (the caller's may repeat or be null); the caller's are restored below.
      const reply = await pool.exchange(jobs, { retryable: jobs.every((j) => !j.info.write) });
      // A node that cannot parse a batch answers one error object without an id: no call is answered.
      byId = "byId" in reply ? reply.byId : [];
    }
  } catch (e) {
    if (e instanceof UpstreamUnavailable) return fail(`Internal error: upstream unreachable for ${ctx.network.slug}: ${e.message}`);
    if (e instanceof NoBackend) return fail(`Internal error: ${e.message}`);
    return fail(`Internal error: the devnet for ${ctx.network.slug} could not be started: ${e instanceof Error ? e.message : String(e)}`);
  }
  jobs.forEach((job, i) => {
    const node = byId[i];
    const headCached = job.info.cache === "head" && Array.isArray(job.params) && job.params.length === 0;
    if (node?.plain && !headCached) {
      // The node's bytes with the caller's id: a large result is neither parsed nor serialised again.
      ctx.meter(job.method, job.info.cu, false);
      answers[job.slot] = new RawJson(node.withId(job.id instanceof RawJson ? job.id.text : JSON.stringify(job.id)));
      return;
    }
    const answer = node?.value();
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
    if (headCached) headCache.set(`${ctx.network.slug}:${job.method}`, { value: answer.result, expires: performance.now() + backends.headCacheMs(ctx.network) });
    answers[job.slot] = { jsonrpc: "2.0", id: job.id, result: answer.result };
  });
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
  interface: "evm",
  serves: (network) => network.family === "evm",
  match(segments) {
    if (segments.length === 1) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint };
    if (segments.length === 2) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint, pathKey: segments[1]! };
    return undefined;
  },
};
