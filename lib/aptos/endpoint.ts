/**
 * The Aptos read API: `GET /aptos/<network>/v1/...` (key in X-API-KEY, or as a Bearer token as
 * Aptos clients send API keys) and `GET /aptos/<network>/<API_KEY>/v1/...`, answering a subset of
 * the fullnode REST API (https://aptos.dev/build/apis/fullnode-rest-api) from the index: the same
 * JSON, the same ledger headers, the same error bodies and statuses, so the official SDKs work
 * unmodified against it. The index acts as a pruned fullnode whose oldest block is the oldest
 * stored one.
 */
import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import type { Network } from "@/lib/networks";
import { APTOS_PAGE_DEFAULT, APTOS_PAGE_MAX, APTOS_ROUTES, matchAptosRoute, type AptosRoute } from "./catalog";
import { AptosApiError, blockFields, LEDGER_HEADERS, ledgerHeaders, parseAddress, parseBool, parseHash, parseU16, parseU64 } from "./rest";
import {
  accountTransactionTexts,
  aptosHead,
  blockByHeight,
  blockByVersion,
  transactionTextByHash,
  transactionTextByVersion,
  transactionTexts,
  type AptosHead,
  type StoredBlock,
} from "./store";
import type { LedgerInfo } from "./types";
import { RATE_LIMIT_HEADERS } from "@/lib/gateway/quota";

const EXPOSE_HEADERS = ["X-Request-Id", "Retry-After", ...RATE_LIMIT_HEADERS, ...LEDGER_HEADERS].join(", ");
/** Transactions a block answer carries at most; clients page through the rest (as the fullnode's own limit). */
const BLOCK_TRANSACTIONS_MAX = 10_000;

export function ledgerInfoOf(network: Network, head: AptosHead): LedgerInfo {
  return {
    chain_id: Number(network.activeChainId),
    epoch: head.latest.epoch.toString(),
    ledger_version: head.latest.lastVersion.toString(),
    oldest_ledger_version: head.earliest.firstVersion.toString(),
    ledger_timestamp: head.latest.timestamp.toString(),
    node_role: "full_node",
    oldest_block_height: head.earliest.height.toString(),
    block_height: head.latest.height.toString(),
  };
}

interface Request {
  network: Network;
  args: string[];
  query: URLSearchParams;
  head: AptosHead;
  info: LedgerInfo;
}

const text = (query: URLSearchParams, name: string) => query.get(name) ?? undefined;

/** A page's size, checked the way the fullnode checks it. */
function pageLimit(query: URLSearchParams): number {
  const raw = text(query, "limit");
  const limit = raw === undefined ? APTOS_PAGE_DEFAULT : parseU16("limit", raw);
  if (limit === 0) throw new AptosApiError(400, "invalid_input", `Given limit value (${limit}) must not be zero`);
  if (limit > APTOS_PAGE_MAX) throw new AptosApiError(400, "invalid_input", `Given limit value (${limit}) is too large, it must be < ${APTOS_PAGE_MAX}`);
  return limit;
}

const versionPruned = (version: bigint) => new AptosApiError(410, "version_pruned", `Ledger version(${version}) has been pruned`);
const list = (texts: string[]) => `[${texts.join(",")}]`;

/** A version past the ledger is not found; one below the oldest stored is pruned. */
function checkVersion(r: Request, version: bigint, notFound: () => AptosApiError): void {
  if (version > r.head.latest.lastVersion) throw notFound();
  if (version < r.head.earliest.firstVersion) throw versionPruned(version);
}

async function blockJson(r: Request, block: StoredBlock): Promise<string> {
  const withTransactions = r.query.has("with_transactions") ? parseBool("with_transactions", r.query.get("with_transactions")!) : false;
  const header = JSON.stringify(blockFields(block));
  const last = block.lastVersion - block.firstVersion < BigInt(BLOCK_TRANSACTIONS_MAX) ? block.lastVersion : block.firstVersion + BigInt(BLOCK_TRANSACTIONS_MAX) - 1n;
  const txs = withTransactions ? list(await transactionTexts(r.network.slug, block.firstVersion, last)) : "null";
  return `${header.slice(0, -1)},"transactions":${txs}}`;
}

/** Checks a route's own parameters before any work (and before it is charged). */
function checkParams(route: AptosRoute, args: string[], query: URLSearchParams): void {
  const q = (name: string, parse: (n: string, t: string) => unknown) => {
    const v = text(query, name);
    if (v !== undefined) parse(name, v);
  };
  switch (route) {
    case "transactions":
      q("start", parseU64);
      q("limit", parseU16);
      return;
    case "transaction_by_hash":
      parseHash("txn_hash", args[0]!);
      return;
    case "transaction_by_version":
      parseU64("txn_version", args[0]!);
      return;
    case "block_by_height":
    case "block_by_version":
      parseU64(route === "block_by_height" ? "block_height" : "version", args[0]!);
      q("with_transactions", parseBool);
      return;
    case "account_transactions":
      parseAddress("address", args[0]!);
      q("start", parseU64);
      q("limit", parseU16);
      return;
    case "ledger_info":
      return;
  }
}

const HANDLERS: Record<AptosRoute, (r: Request) => Promise<string>> = {
  async ledger_info(r) {
    return JSON.stringify(r.info);
  },
  async transactions(r) {
    const limit = pageLimit(r.query);
    const ledger = r.head.latest.lastVersion;
    const oldest = r.head.earliest.firstVersion;
    const given = text(r.query, "start");
    const lastPage = ledger - BigInt(limit - 1);
    const start = given === undefined ? (lastPage > oldest ? lastPage : oldest) : parseU64("start", given);
    if (start > ledger) throw new AptosApiError(400, "invalid_input", `Given start value (${start}) is higher than the current ledger version, it must be < ${ledger}`);
    if (start < oldest) throw versionPruned(start);
    const end = start + BigInt(limit) - 1n < ledger ? start + BigInt(limit) - 1n : ledger;
    return list(await transactionTexts(r.network.slug, start, end));
  },
  async transaction_by_hash(r) {
    const hash = parseHash("txn_hash", r.args[0]!);
    const found = await transactionTextByHash(r.network.slug, hash);
    if (!found) throw new AptosApiError(404, "transaction_not_found", `Transaction not found by Transaction hash(${hash})`);
    return found;
  },
  async transaction_by_version(r) {
    const version = parseU64("txn_version", r.args[0]!);
    const notFound = () => new AptosApiError(404, "transaction_not_found", `Transaction not found by Ledger version(${version})`);
    checkVersion(r, version, notFound);
    const found = await transactionTextByVersion(r.network.slug, version);
    if (!found) throw notFound();
    return found;
  },
  async block_by_height(r) {
    const height = parseU64("block_height", r.args[0]!);
    if (height > r.head.latest.height) throw new AptosApiError(404, "block_not_found", `Block not found by Block height(${height})`);
    if (height < r.head.earliest.height) throw new AptosApiError(410, "block_pruned", `Block(${height}) has been pruned`);
    const block = await blockByHeight(r.network.slug, height);
    if (!block) throw new AptosApiError(404, "block_not_found", `Block not found by Block height(${height})`);
    return blockJson(r, block);
  },
  async block_by_version(r) {
    const version = parseU64("version", r.args[0]!);
    const notFound = () => new AptosApiError(404, "block_not_found", `Block not found by Ledger version(${version})`);
    checkVersion(r, version, notFound);
    const block = await blockByVersion(r.network.slug, version);
    if (!block) throw notFound();
    return blockJson(r, block);
  },
  async account_transactions(r) {
    const address = parseAddress("address", r.args[0]!);
    const limit = pageLimit(r.query);
    const given = text(r.query, "start");
    return list(await accountTransactionTexts(r.network.slug, address, given === undefined ? null : parseU64("start", given), limit));
  },
};

/** Clients asking for BCS only: this service answers JSON only, as a fullnode with BCS output disabled. */
function wantsOnlyBcs(ctx: GatewayContext): boolean {
  const accept = ctx.req.headers.accept;
  return accept !== undefined && accept.includes("application/x-bcs") && !accept.includes("json") && !accept.includes("*/*");
}

function answer(status: number, body: string, info: LedgerInfo | undefined): GatewayResponse {
  return { status, body, headers: { "Access-Control-Expose-Headers": EXPOSE_HEADERS, ...(info ? ledgerHeaders(info) : {}) } };
}

function routeEndpoint(route: AptosRoute, args: string[]): Endpoint {
  const spec = APTOS_ROUTES[route];
  return {
    methods: ["GET"],
    async handle(ctx) {
      let info: LedgerInfo | undefined;
      try {
        if (wantsOnlyBcs(ctx)) throw new AptosApiError(403, "api_disabled", `${spec.title} with BCS output is disabled on this endpoint`, false);
        const query = ctx.url.searchParams;
        checkParams(route, args, query);
        ctx.charge(spec.cu);
        const head = await aptosHead(ctx.network.slug);
        if (!head) throw new AptosApiError(503, "internal_error", `The ledger of ${ctx.network.slug} has no blocks yet; try again shortly.`, false);
        info = ledgerInfoOf(ctx.network, head);
        const body = await HANDLERS[route]({ network: ctx.network, args, query, head, info });
        ctx.meter(route, spec.cu, false);
        return answer(200, body, info);
      } catch (e) {
        if (!(e instanceof AptosApiError)) throw e;
        ctx.meter(route, 0, true, e.status);
        return answer(e.status, JSON.stringify(e.toJSON()), e.withLedger ? info : undefined);
      }
    },
  };
}

/** `/aptos/<network>/v1/...` and `/aptos/<network>/<API_KEY>/v1/...`. */
export const aptosMount: Mount = {
  prefix: "aptos",
  serves: (network) => network.family === "move",
  bearerKey: true,
  corsHeaders: ["Authorization", "x-aptos-client", "x-aptos-typescript-sdk-origin-method"],
  match(segments) {
    const [network, second] = segments;
    if (network === undefined || second === undefined) return undefined;
    const keyed = second !== "v1";
    if (keyed && segments[2] !== "v1") return undefined;
    const matched = matchAptosRoute(segments.slice(keyed ? 3 : 2));
    if (!matched) return undefined;
    return {
      network: { protocol: "aptos", network },
      endpoint: routeEndpoint(matched.route, matched.args),
      ...(keyed ? { pathKey: second } : {}),
    };
  },
};
