import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONSENSUS_ENDPOINTS, CONSENSUS_METHODS } from "@/lib/consensus/catalog";
import { parseParams } from "@/lib/consensus/params";
import { RpcError } from "@/lib/jsonrpc/errors";
import { EVM_METHODS, refusal } from "@/lib/evm/methods";
import { EVM_PLAYGROUND_METHODS, evmRequest, isEvmPlaygroundMethod, walletRpcUrl } from "@/lib/evm/playground";
import { checkParams } from "@/lib/chains/descriptor";
import { checkField, checkForm, consensusRequest, exampleFor, initialValues, requestParams } from "@/lib/consensus/playground";
import { queryExcerpt, typeSummary } from "./request";
import { curlCommand, requestUrl } from "./send";

const txSearch = CONSENSUS_ENDPOINTS.tx_search;
const tx = CONSENSUS_ENDPOINTS.tx;
const block = CONSENSUS_ENDPOINTS.block;
const HASH = "AB".repeat(32);

/** The endpoint's verdict on the same values: null when it takes them, else its error. */
function endpointError(method: (typeof CONSENSUS_METHODS)[number], values: Record<string, string>): RpcError | null {
  try {
    parseParams(method, values);
    return null;
  } catch (e) {
    if (e instanceof RpcError) return e;
    throw e;
  }
}

describe("checkForm", () => {
  it("asks for a missing required parameter without calling it an error", () => {
    const form = checkForm(txSearch, initialValues(txSearch));
    expect(form.checks.query).toEqual({ missing: true, error: null, query: null });
    expect(form.blocker).toBe("Enter query to send.");
    expect(checkForm(txSearch, { ...initialValues(txSearch), query: '  ""  ' }).blocker).toBe("Enter query to send.");
  });

  it("reports a query's parse error with its offset, in the text the endpoint reads", () => {
    const form = checkForm(txSearch, { ...initialValues(txSearch), query: "tx.height >" });
    expect(form.checks.query?.query).toEqual({ error: expect.objectContaining({ offset: 11 }), text: "tx.height >", start: 0 });
    expect(form.checks.query?.error).toMatch(/^parse error at offset 11: expected a number, TIME or DATE after '>'.*\.$/);
    expect(form.blocker).toBe("Fix query to send.");
    // Trimmed and unquoted as the endpoint does: the offset counts from where the query starts in the field.
    const quoted = checkForm(txSearch, { ...initialValues(txSearch), query: '  "tx.height >"' }).checks.query?.query;
    expect(quoted).toEqual({ error: expect.objectContaining({ offset: 11 }), text: "tx.height >", start: 3 });
    expect(checkForm(txSearch, { ...initialValues(txSearch), query: '"tx.height > 5"' }).blocker).toBeNull();
  });

  it("prices a search as the endpoint will: the catalog's CU, plus its per-condition part for each event condition after the first", () => {
    const cu = (query: string) => checkForm(txSearch, { ...initialValues(txSearch), query }).cu;
    const { cu: base, search } = CONSENSUS_ENDPOINTS.tx_search;
    expect(cu("")).toBe(base);
    expect(cu("tx.height > 5")).toBe(base);
    expect(cu("transfer.amount = 1 AND tx.height > 5")).toBe(base);
    expect(cu("transfer.amount = 1 AND message.sender = 'a' AND transfer.recipient = 'b'")).toBe(base + 2 * search!.perCondition);
    // Repeats are merged by the parser; a query that does not parse shows the base price.
    expect(cu("a = 1 AND a = 1 AND a = 1")).toBe(base);
    expect(cu("a = 1 AND b =")).toBe(base);
  });

  it("checks integers, and refuses those outside the catalog's range although the endpoint reads them", () => {
    const at = (per_page: string, page = "") => checkForm(txSearch, { ...initialValues(txSearch), query: "tx.height = 5", per_page, page });
    expect(at("100").blocker).toBeNull();
    expect(at(" 7 ").blocker).toBeNull();
    expect(at("101").checks.per_page?.error).toBe("per_page is at most 100.");
    expect(at("0").checks.per_page?.error).toBe("per_page starts at 1.");
    expect(at("1e3").checks.per_page?.error).toBe("per_page must be a whole number, such as 5.");
    expect(at("-1").checks.per_page?.error).toBe("per_page must be a whole number, such as 5.");
    expect(at("", "0").blocker).toBe("Fix page to send.");
    expect(at("x", "0").blocker).toBe("Fix page and per_page to send.");
    expect(checkForm(block, { height: "9223372036854775807" }).blocker).toBeNull();
    expect(checkForm(block, { height: "9223372036854775808" }).checks.height?.error).toBe("height is too large: the maximum is 9223372036854775807.");
    expect(checkForm(block, { height: "" }).blocker).toBeNull();
  });

  it("checks transaction hashes", () => {
    expect(checkForm(tx, { hash: HASH, prove: "false" }).blocker).toBeNull();
    expect(checkForm(tx, { hash: `0x${HASH.toLowerCase()}`, prove: "false" }).blocker).toBeNull();
    expect(checkForm(tx, { hash: "xyz", prove: "false" }).checks.hash?.error).toBe(
      'hash must be 64 hexadecimal characters (32 bytes), optionally after 0x; "x" is not a hex digit.',
    );
    expect(checkForm(tx, { hash: "ABCD", prove: "false" }).checks.hash?.error).toBe("hash must be 64 hexadecimal characters (32 bytes), optionally after 0x; this one has 4.");
  });

  it("says what the endpoint says: its error detail is the form's message with the value it got", () => {
    const detail = (method: (typeof CONSENSUS_METHODS)[number], values: Record<string, string>) => endpointError(method, values)?.data;
    expect(detail("tx", { hash: "ABCD" })).toBe(`${checkField(tx.params[0]!, "ABCD").error!.slice(0, -1)} (got "ABCD")`);
    expect(detail("block", { height: "five" })).toBe('height must be a whole number, such as 5 (got "five")');
    expect(detail("tx", { hash: HASH, prove: "maybe" })).toBe('prove must be true or false (got "maybe")');
    expect(detail("tx_search", { query: "tx.height >" })).toBe(checkField(txSearch.params[0]!, "tx.height >").error!.slice(0, -1));
    expect(endpointError("tx_search", {})?.message).toBe("Invalid params: query is required");
  });

  it("never lets through what the endpoint refuses, and refuses only what the endpoint refuses or changes", () => {
    const value = fc.oneof(
      fc.constantFrom("", " ", '""', "0", "1", "5", " 42 ", '"7"', "100", "101", "-1", "1e3", "abc", "9223372036854775807", "9223372036854775808"),
      fc.constantFrom("true", "false", "asc", "desc", "maybe", HASH, `0x${HASH.toLowerCase()}`, HASH.slice(2), `${HASH.slice(2)}zz`),
      fc.constantFrom("tx.height = 5", "tx.height >", "a = 1 OR b = 2", "block.height > 3 AND block.height <= 9", `"tx.height=5"`, `a.b = '${"x".repeat(600)}'`),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...CONSENSUS_METHODS), fc.dictionary(fc.constantFrom("height", "query", "page", "per_page", "order_by", "prove", "hash"), value), (method, values) => {
        const spec = CONSENSUS_ENDPOINTS[method];
        const refused = endpointError(method, values);
        const form = checkForm(spec, values);
        if (refused) expect(form.blocker, `${method} ${JSON.stringify(values)}: ${refused.message}`).not.toBeNull();
        for (const p of spec.params) {
          const field = form.checks[p.name]!;
          // A field's error is the endpoint's refusal of it, or a value outside the catalog's range.
          if (field.error && !endpointError(method, { [p.name]: values[p.name] ?? "", ...(p.required ? {} : requiredOf(method)) })) {
            expect(field.error, `${p.name}=${JSON.stringify(values[p.name])}`).toMatch(/ (starts at 1|is at most \d+)\.$/);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

/** Valid values for an endpoint's required parameters, so that one other parameter can be judged alone. */
function requiredOf(method: (typeof CONSENSUS_METHODS)[number]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of CONSENSUS_ENDPOINTS[method].params) if (p.required) out[p.name] = p.type === "hash" ? HASH : "tx.height = 5";
  return out;
}

describe("the consensus request and its URL", () => {
  it("sends typed values and only the selects and toggles that differ from the default", () => {
    const values = { ...initialValues(txSearch), query: "tx.height = 5", per_page: " 10 " };
    expect(requestParams(txSearch, values)).toEqual([
      ["query", "tx.height = 5"],
      ["per_page", "10"],
    ]);
    expect(requestParams(txSearch, { ...values, prove: "true", order_by: "desc" })).toEqual([
      ["query", "tx.height = 5"],
      ["prove", "true"],
      ["per_page", "10"],
      ["order_by", "desc"],
    ]);
  });

  it("encodes values so that no single quote reaches the URL", () => {
    const url = requestUrl(consensusRequest("babylon-mainnet", "tx_search", [["query", "transfer.sender = 'bbn1abc'"]]));
    expect(url).toBe("/rpc/babylon-mainnet/tx_search?query=transfer.sender%20%3D%20%27bbn1abc%27");
    expect(new URL(url, "http://x").searchParams.get("query")).toBe("transfer.sender = 'bbn1abc'");
    expect(requestUrl(consensusRequest("babylon-testnet", "status", []))).toBe("/rpc/babylon-testnet/status");
  });

  it("builds the curl command on one line", () => {
    expect(curlCommand(consensusRequest("babylon-mainnet", "block", [["height", "5"]]), "http://localhost:3000", "bg_abc")).toBe(
      "curl -s 'http://localhost:3000/rpc/babylon-mainnet/block?height=5' -H 'X-API-KEY: bg_abc'",
    );
  });
});

describe("the EVM request", () => {
  it("offers only methods the gateway serves on every plan, and prices them from its catalog", () => {
    for (const m of EVM_PLAYGROUND_METHODS) {
      expect(EVM_METHODS[m], m).toBeDefined();
      expect(refusal(m, "FREE"), m).toBeUndefined();
    }
    expect(isEvmPlaygroundMethod("eth_getLogs")).toBe(true);
    expect(isEvmPlaygroundMethod("eth_sendRawTransaction")).toBe(false);
    expect(isEvmPlaygroundMethod("toString")).toBe(false);
  });

  it("takes params as a JSON array", () => {
    expect(checkParams('["latest", false]')).toEqual({ ok: true, params: ["latest", false] });
    expect(checkParams(" ")).toEqual({ ok: false, error: "Enter the params as a JSON array, such as []." });
    expect(checkParams('["0x1234", ')).toEqual({ ok: false, error: expect.stringMatching(/^Not valid JSON: /) });
    expect(checkParams('{"address": "0x1"}')).toEqual({ ok: false, error: 'The params must be a JSON array, such as [] or ["latest", false].' });
  });

  it("posts JSON-RPC 2.0, and the curl command puts headers and body on lines of their own", () => {
    const request = evmRequest("ethereum-sepolia", "eth_getBalance", ["0xabc", "latest"]);
    expect(requestUrl(request)).toBe("/node/ethereum-sepolia");
    expect(JSON.parse(request.body!)).toEqual({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: ["0xabc", "latest"] });
    expect(curlCommand(evmRequest("ethereum-sepolia", "eth_call", [{ data: "it's" }]), "http://localhost:3000", "bg_abc")).toBe(
      [
        "curl -s 'http://localhost:3000/node/ethereum-sepolia' \\",
        "  -H 'Content-Type: application/json' -H 'X-API-KEY: bg_abc' \\",
        `  -d '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"data":"it'\\''s"}]}'`,
      ].join("\n"),
    );
    expect(walletRpcUrl("http://localhost:3000", "ethereum-sepolia", "bg_abc")).toBe("http://localhost:3000/node/ethereum-sepolia/bg_abc");
  });
});

describe("queryExcerpt", () => {
  it("marks the character at the offset, or the end", () => {
    expect(queryExcerpt("a = 'x", 4)).toEqual({ before: "a = ", at: "'", after: "x", column: 4 });
    expect(queryExcerpt("tx.height >", 11)).toEqual({ before: "tx.height >", at: "", after: "", column: 11 });
    expect(queryExcerpt("a\t=\n5", 2)).toEqual({ before: "a ", at: "=", after: " 5", column: 2 });
  });

  it("shows a window around the offset of a long query", () => {
    const q = `${"a".repeat(100)}!${"b".repeat(100)}`;
    const e = queryExcerpt(q, 100);
    expect(e.at).toBe("!");
    expect(e.before).toBe(`…${"a".repeat(40)}`);
    expect(e.after).toBe(`${"b".repeat(40)}…`);
    expect(e.column).toBe(41);
  });
});

describe("catalog-driven text and examples", () => {
  it("describes types and limits", () => {
    const perPage = txSearch.params.find((p) => p.name === "per_page")!;
    const page = txSearch.params.find((p) => p.name === "page")!;
    expect(typeSummary(perPage)).toBe("integer 1–100 · default 30 · optional");
    expect(typeSummary(page)).toBe("integer ≥ 1 · default 1 · optional");
    expect(typeSummary(tx.params[0]!)).toBe("hex, 64 digits · required");
  });

  it("fills examples from recent data", () => {
    const ex = { latestHeight: 42, txHash: HASH, sender: "bbn1abc", query: "transfer.sender = 'bbn1abc'" };
    expect(exampleFor("block", "height", ex)?.value).toBe("42");
    expect(exampleFor("tx", "hash", ex)?.value).toBe(ex.txHash);
    expect(exampleFor("tx_search", "query", ex)?.value).toBe(ex.query);
    expect(exampleFor("block_search", "query", ex)?.value).toBe("block.height >= 33 AND block.height <= 42");
    expect(exampleFor("block", "height", { latestHeight: null, txHash: null, sender: null, query: null })).toBeNull();
    expect(exampleFor("tx_search", "page", ex)).toBeNull();
  });
});
