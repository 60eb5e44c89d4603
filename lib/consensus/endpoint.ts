import { isStatementTimeout } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { getEnv } from "@/lib/env";
import { databaseUnavailable } from "@/lib/errors";
import type { Endpoint, GatewayContext, Mount } from "@/lib/gateway/types";
import { chargeItem, failure, parseBody, refuseBody, respondOne, type Answer, type Body, type Dialect, type RequestObject } from "@/lib/jsonrpc/envelope";
import { BATCH_BUDGET_USED, internalError, InvalidRequest, invalidParams, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, Unavailable, type Id } from "@/lib/jsonrpc/errors";
import { callCu, CONSENSUS_ENDPOINTS, isConsensusMethod, type ConsensusMethod } from "./catalog";
import { runMethod } from "./handlers";
import { parseParams, type RawParams } from "./params";

/** CometBFT gives every error a data string; results may hold stored JSON (RawJson). */
export const COMET: Dialect = { messageAsData: true, rawResults: true };

const cometError = (code: number, message: string) => new RpcError(code, message, message);

/** Items of one batch run at most this many at a time (each holds a public-pool connection while it runs). */
export const BATCH_CONCURRENCY = 4;

/**
 * Calls of one project that run at once, across all its requests (1 on the free plan, 2 on paid
 * plans); the rest wait their turn. The public pool has DATABASE_PUBLIC_POOL_SIZE connections (4 by
 * default): one project's heavy searches hold at most this many, so other projects' calls always
 * find a connection, and a free key keeps at most one database core busy.
 */
export const projectConcurrency = (plan: Plan): number => (plan === "FREE" ? 1 : 2);

const running = new Map<string, { active: number; waiting: Array<() => void> }>();

async function inProjectTurn<T>(principal: { projectId: string; plan: Plan }, work: () => Promise<T>): Promise<T> {
  const projectId = principal.projectId;
  let slot = running.get(projectId);
  if (!slot) running.set(projectId, (slot = { active: 0, waiting: [] }));
  if (slot.active >= projectConcurrency(principal.plan)) await new Promise<void>((resolve) => slot.waiting.push(resolve));
  else slot.active++;
  try {
    return await work();
  } finally {
    const next = slot.waiting.shift();
    if (next) next(); // the slot passes on as it is
    else if (--slot.active === 0) running.delete(projectId);
  }
}

function timedOut(): RpcError {
  const seconds = getEnv().PUBLIC_STATEMENT_TIMEOUT_MS / 1000;
  return internalError(
    `the query ran longer than ${seconds} s and was stopped: narrow it (a tx.height or block.height range, fewer or more selective conditions)`,
  );
}

/** A call the database could not serve because it is unreachable: −32002, and HTTP 503 when no other item was answered. */
function unavailable(e: unknown): Unavailable | undefined {
  const refusal = databaseUnavailable(e);
  return refusal && new Unavailable(refusal);
}

/**
 * Checks one call and takes its throughput; answers it at once when it is refused, or returns the
 * call to run. `price` parses the call and gives its CU (a search's grows with its conditions,
 * known once parsed, before it runs); `answerError` writes an error in the interface's form.
 * Metering: the CU on success; a failed call, or one the rate limit refused (charged before it
 * runs), counts as a request and an error but costs nothing (the same rule as every public endpoint).
 */
export function meteredCall<P>(
  ctx: GatewayContext,
  method: string,
  id: Id,
  price: () => { params: P; cu: number },
  run: (params: P) => Promise<unknown>,
  answerError: (id: Id, e: RpcError) => Answer = failure,
): Answer | (() => Promise<Answer>) {
  let priced: { params: P; cu: number };
  try {
    priced = price();
    const limited = chargeItem(ctx, priced.cu);
    if (limited) throw limited;
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    ctx.meter(method, 0, true);
    return answerError(id, e);
  }
  const { params, cu } = priced;
  return async () => {
    try {
      const result = await inProjectTurn(ctx.principal, () => run(params));
      ctx.meter(method, cu, false);
      return { jsonrpc: "2.0", id, result };
    } catch (e) {
      const error = e instanceof RpcError ? e : isStatementTimeout(e) ? timedOut() : unavailable(e);
      if (!error) throw e;
      ctx.meter(method, 0, true);
      return answerError(id, error);
    }
  };
}

function prepare(ctx: GatewayContext, method: ConsensusMethod, raw: RawParams, id: Id): Answer | (() => Promise<Answer>) {
  return meteredCall(
    ctx,
    method,
    id,
    () => {
      const params = parseParams(method, raw);
      return { params, cu: callCu(method, params.query) };
    },
    (params) => runMethod(method, ctx.network, params),
  );
}

async function execute(ctx: GatewayContext, method: ConsensusMethod, raw: RawParams, id: Id): Promise<Answer> {
  const call = prepare(ctx, method, raw, id);
  return typeof call === "function" ? call() : call;
}

/** `GET /rpc/<network>/<method>?…`: the URI form, with the optional integer `id` echoed (−1 when absent). */
function uriEndpoint(method: ConsensusMethod): Endpoint {
  return {
    methods: ["GET"],
    async handle(ctx) {
      const raw: RawParams = {};
      for (const [k, v] of ctx.url.searchParams) raw[k] = v;
      const idText = raw.id;
      if (idText !== undefined && !/^-?\d{1,15}$/.test(idText)) {
        ctx.meter(method, 0, true);
        return respondOne(failure(-1, invalidParams(`id must be an integer, got ${JSON.stringify(idText.slice(0, 40))}`)), COMET);
      }
      return respondOne(await execute(ctx, method, raw, idText === undefined ? -1 : Number(idText)), COMET);
    },
  };
}

/** Named JSON-RPC params as strings, the way the URI form carries them. */
function namedParams(params: RequestObject["params"]): RawParams | null {
  if (params === undefined) return {};
  if (Array.isArray(params)) return null;
  const raw: RawParams = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === "string") raw[k] = v;
    else if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") raw[k] = String(v);
    else if (v !== null && v !== undefined) return null;
  }
  return raw;
}

function callOne(ctx: GatewayContext, body: Body, i: number): Answer | (() => Promise<Answer>) {
  const req = body.request(i);
  if (req instanceof InvalidRequest) {
    ctx.meter("invalid", 0, true);
    return failure(req.id, req);
  }
  const id = body.id(i, req);
  if (!isConsensusMethod(req.method)) {
    ctx.meter("invalid", 0, true);
    return failure(id, cometError(METHOD_NOT_FOUND, `Method not found: ${req.method.slice(0, 64)} (available: ${Object.keys(CONSENSUS_ENDPOINTS).join(", ")})`));
  }
  const raw = namedParams(req.params);
  if (!raw) {
    ctx.meter(req.method, 0, true);
    return failure(id, cometError(INVALID_PARAMS, "Invalid params: params must be an object of named parameters with string, number or boolean values"));
  }
  return prepare(ctx, req.method, raw, id);
}

/**
 * Runs a batch's calls BATCH_CONCURRENCY at a time, in order. Once PUBLIC_BATCH_BUDGET_MS has passed
 * since the batch began, no further call starts: each is answered with an error saying so and is
 * not metered (it did not run).
 */
export async function runBatch(calls: Array<Answer | (() => Promise<Answer>)>, ids: Id[]): Promise<Answer[]> {
  // Every call answered already (refused before running, a flood's case): nothing to schedule.
  if (!calls.some((c) => typeof c === "function")) return calls as Answer[];
  const budgetMs = getEnv().PUBLIC_BATCH_BUDGET_MS;
  const deadline = performance.now() + budgetMs;
  const answers: Answer[] = new Array<Answer>(calls.length);
  let next = 0;
  const lane = async () => {
    while (next < calls.length) {
      const i = next++;
      const call = calls[i]!;
      if (typeof call !== "function") answers[i] = call;
      else if (performance.now() >= deadline) {
        answers[i] = failure(ids[i]!, cometError(BATCH_BUDGET_USED, `Batch time budget used up: the batch ran for ${budgetMs / 1000} s, so this call was not run; send it again, or send smaller batches`));
      } else answers[i] = await call();
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, calls.length) }, lane));
  return answers;
}

/**
 * A JSON-RPC POST endpoint (one call or a batch) over `call`, which checks and charges one item;
 * every item is checked and charged in order before any of them runs. `refusal` words a body that
 * is not JSON-RPC (default: as it is).
 */
export function batchEndpoint(call: (ctx: GatewayContext, body: Body, i: number) => Answer | (() => Promise<Answer>), refusal: (e: RpcError) => RpcError = (e) => e): Endpoint {
  return {
    methods: ["POST"],
    async handle(ctx) {
      const body = parseBody(await ctx.body(), COMET);
      if (body instanceof RpcError) {
        ctx.meter("invalid", 0, true);
        return refuseBody(refusal(body));
      }
      const calls: Array<Answer | (() => Promise<Answer>)> = [];
      const ids: Id[] = [];
      for (let i = 0; i < body.size; i++) {
        calls.push(call(ctx, body, i));
        const req = body.request(i);
        ids.push(req instanceof InvalidRequest ? req.id : body.id(i, req));
      }
      return body.respond(await runBatch(calls, ids));
    },
  };
}

/** `POST /rpc/<network>`: the same methods as JSON-RPC 2.0 with named params, as CometBFT serves them. */
const jsonRpcEndpoint = batchEndpoint(callOne);

const uriEndpoints = Object.fromEntries(Object.keys(CONSENSUS_ENDPOINTS).map((m) => [m, uriEndpoint(m as ConsensusMethod)])) as Record<ConsensusMethod, Endpoint>;

/** `/rpc/<protocol>-<network>/<method>` (GET) and `/rpc/<protocol>-<network>` (POST JSON-RPC). */
export const rpcMount: Mount = {
  prefix: "rpc",
  serves: (network) => network.family === "consensus",
  match(segments) {
    const [slug, method] = segments;
    if (slug === undefined || segments.length > 2) return undefined;
    if (method === undefined) return { network: { slug }, endpoint: jsonRpcEndpoint };
    return isConsensusMethod(method) ? { network: { slug }, endpoint: uriEndpoints[method] } : undefined;
  },
};
