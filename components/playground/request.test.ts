import { describe, expect, it } from "vitest";
import { CONSENSUS_ENDPOINTS } from "@/lib/consensus/catalog";
import { checkForm, classify, curlCommand, initialValues, queryExcerpt, requestParams, rpcPath, typeSummary } from "./request";
import { exampleFor } from "./types";

const txSearch = CONSENSUS_ENDPOINTS.tx_search;
const tx = CONSENSUS_ENDPOINTS.tx;
const block = CONSENSUS_ENDPOINTS.block;

describe("checkForm", () => {
  it("asks for a missing required parameter without calling it an error", () => {
    const form = checkForm(txSearch, initialValues(txSearch));
    expect(form.valid).toBe(false);
    expect(form.checks.query).toEqual({ missing: true, error: null, queryError: null });
    expect(form.blocker).toBe("Enter query to send.");
  });

  it("reports a query's parse error with its offset", () => {
    const form = checkForm(txSearch, { ...initialValues(txSearch), query: "tx.height >" });
    expect(form.valid).toBe(false);
    expect(form.checks.query?.queryError?.offset).toBe(11);
    expect(form.checks.query?.error).toMatch(/^parse error at offset 11: expected a number, TIME or DATE/);
    expect(form.blocker).toBe("Fix query to send.");
  });

  it("checks integers against the catalog's limits", () => {
    const at = (per_page: string, page = "") => checkForm(txSearch, { ...initialValues(txSearch), query: "tx.height = 5", per_page, page });
    expect(at("100").valid).toBe(true);
    expect(at(" 7 ").valid).toBe(true);
    expect(at("101").checks.per_page?.error).toBe("per_page is at most 100.");
    expect(at("0").checks.per_page?.error).toBe("per_page starts at 1.");
    expect(at("1e3").checks.per_page?.error).toMatch(/whole number/);
    expect(at("-1").checks.per_page?.error).toMatch(/whole number/);
    expect(at("", "0").blocker).toBe("Fix page to send.");
    expect(checkForm(block, { height: "99999999999999999999" }).checks.height?.error).toBe("height is too large.");
    expect(checkForm(block, { height: "" }).valid).toBe(true);
  });

  it("checks transaction hashes", () => {
    const hash = "AB".repeat(32);
    expect(checkForm(tx, { hash, prove: "false" }).valid).toBe(true);
    expect(checkForm(tx, { hash: `0x${hash.toLowerCase()}`, prove: "false" }).valid).toBe(true);
    expect(checkForm(tx, { hash: "xyz", prove: "false" }).checks.hash?.error).toMatch(/hex digits/);
    expect(checkForm(tx, { hash: "ABCD", prove: "false" }).checks.hash?.error).toBe("A transaction hash has 64 hex digits; this one has 4.");
  });
});

describe("requestParams and rpcPath", () => {
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
    const path = rpcPath("babylon-mainnet", "tx_search", [["query", "transfer.sender = 'bbn1abc'"]]);
    expect(path).toBe("/rpc/babylon-mainnet/tx_search?query=transfer.sender%20%3D%20%27bbn1abc%27");
    expect(new URL(path, "http://x").searchParams.get("query")).toBe("transfer.sender = 'bbn1abc'");
    expect(rpcPath("babylon-testnet", "status", [])).toBe("/rpc/babylon-testnet/status");
  });

  it("builds the curl command", () => {
    expect(curlCommand("http://localhost:3000", "/rpc/babylon-mainnet/block?height=5", "bg_abc")).toBe(
      "curl -s 'http://localhost:3000/rpc/babylon-mainnet/block?height=5' -H 'X-API-KEY: bg_abc'",
    );
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

describe("classify", () => {
  it("tells results, JSON-RPC errors, HTTP errors and other answers apart", () => {
    expect(classify(200, { jsonrpc: "2.0", id: -1, result: {} })).toEqual({ kind: "result" });
    expect(classify(200, { jsonrpc: "2.0", id: -1, error: { code: -32603, message: "Internal error", data: "parse error at offset 3" } })).toEqual({
      kind: "rpc-error",
      code: -32603,
      message: "Internal error",
      data: "parse error at offset 3",
    });
    expect(classify(429, { code: "TOO_MANY_REQUESTS", message: "Slow down." })).toEqual({ kind: "http-error", code: "TOO_MANY_REQUESTS", message: "Slow down." });
    expect(classify(502, undefined)).toEqual({ kind: "http-error", code: null, message: "The request failed with HTTP 502." });
    expect(classify(200, undefined).kind).toBe("unexpected");
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
    const ex = { latestHeight: 42, txHash: "AB".repeat(32), sender: "bbn1abc", query: "transfer.sender = 'bbn1abc'" };
    expect(exampleFor("block", "height", ex)?.value).toBe("42");
    expect(exampleFor("tx", "hash", ex)?.value).toBe(ex.txHash);
    expect(exampleFor("tx_search", "query", ex)?.value).toBe(ex.query);
    expect(exampleFor("block_search", "query", ex)?.value).toBe("block.height >= 33 AND block.height <= 42");
    expect(exampleFor("block", "height", { latestHeight: null, txHash: null, sender: null, query: null })).toBeNull();
    expect(exampleFor("tx_search", "page", ex)).toBeNull();
  });
});
