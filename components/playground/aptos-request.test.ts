import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { APTOS_PAGE_MAX, APTOS_ROUTES, matchAptosRoute, type AptosRoute } from "@/lib/aptos/catalog";
import { AptosApiError, parseAddress, parseBool, parseHash, parseU16, parseU64 } from "@/lib/aptos/rest";
import { aptosClient } from "@/lib/aptos/family.client";
import type { AptosExamples } from "@/lib/aptos/examples";
import { APTOS_PLAYGROUND_ROUTES, aptosExampleFor, aptosFieldSpec, aptosRequest, aptosTypeSummary, checkAptosField, checkAptosForm, isAptosRoute } from "@/lib/aptos/playground";
import { formValues, type FormEditor, type ParamValues } from "@/lib/chains/descriptor";
import { classify, curlCommand, requestUrl } from "./send";

/** The tab's values: edited ones, else the defaults from the index (as the playground fills them). */
const aptosValues = (route: AptosRoute, edits: ParamValues | undefined, ex: AptosExamples | undefined) => formValues(aptosClient.playground!.editor as FormEditor, route, edits, ex);

const HASH = `0x${"ab".repeat(32)}`;
const SENDER = `0x${"0c".repeat(32)}`;
const EXAMPLES: AptosExamples = { blockHeight: "1204", ledgerVersion: "5120", transaction: { version: "5117", hash: HASH, sender: SENDER } };

const param = (route: AptosRoute, name: string) => APTOS_ROUTES[route].params.find((p) => p.name === name)!;

/** The path segments a request's URL is routed by, after `/aptos/<network>/v1`. */
function routed(path: string) {
  const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  expect(segments.slice(0, 3)).toEqual(["aptos", "testnet", "v1"]);
  return matchAptosRoute(segments.slice(3));
}

/** Whether the endpoint takes a parameter's value, with the parser it applies to it. */
function endpointTakes(name: string, text: string): boolean {
  const parse: Record<string, (n: string, t: string) => unknown> = {
    txn_hash: parseHash,
    txn_version: parseU64,
    version: parseU64,
    block_height: parseU64,
    start: parseU64,
    address: parseAddress,
    with_transactions: parseBool,
    limit: (n, t) => {
      const v = parseU16(n, t);
      if (v === 0 || v > APTOS_PAGE_MAX) throw new AptosApiError(400, "invalid_input", "limit");
    },
  };
  try {
    parse[name]!(name, text);
    return true;
  } catch (e) {
    if (e instanceof AptosApiError) return false;
    throw e;
  }
}

describe("the Aptos routes offered", () => {
  it("are the catalog's, each routed to itself with its path parameters", () => {
    expect(APTOS_PLAYGROUND_ROUTES).toEqual(Object.keys(APTOS_ROUTES));
    expect(isAptosRoute("ledger_info")).toBe(true);
    expect(isAptosRoute("toString")).toBe(false);
    for (const route of APTOS_PLAYGROUND_ROUTES) {
      const values = aptosValues(route, undefined, EXAMPLES);
      const request = aptosRequest("testnet", route, values);
      const pathArgs = APTOS_ROUTES[route].params.filter((p) => p.in === "path").map((p) => values[p.name]);
      expect(routed(request.path), route).toEqual({ route, args: pathArgs });
      expect(request.method).toBe("GET");
      expect(request.answers).toBe("rest");
      expect(checkAptosForm(route, values).blocker, route).toBeNull();
    }
  });
});

describe("aptosRequest", () => {
  it("asks for ledger information at /v1", () => {
    expect(requestUrl(aptosRequest("testnet", "ledger_info", {}))).toBe("/aptos/testnet/v1");
  });

  it("puts path parameters in the path (trimmed) and query parameters in order, with_transactions only when true", () => {
    expect(requestUrl(aptosRequest("mainnet", "transaction_by_hash", { txn_hash: ` ${HASH} ` }))).toBe(`/aptos/mainnet/v1/transactions/by_hash/${HASH}`);
    expect(requestUrl(aptosRequest("testnet", "transactions", { start: "100", limit: " 10" }))).toBe("/aptos/testnet/v1/transactions?start=100&limit=10");
    expect(requestUrl(aptosRequest("testnet", "transactions", { start: "", limit: "" }))).toBe("/aptos/testnet/v1/transactions");
    expect(requestUrl(aptosRequest("testnet", "block_by_height", { block_height: "42", with_transactions: "true" }))).toBe(
      "/aptos/testnet/v1/blocks/by_height/42?with_transactions=true",
    );
    expect(requestUrl(aptosRequest("testnet", "block_by_version", { version: "7", with_transactions: "false" }))).toBe("/aptos/testnet/v1/blocks/by_version/7");
    expect(requestUrl(aptosRequest("testnet", "account_transactions", { address: "0x1", start: "3", limit: "5" }))).toBe(
      "/aptos/testnet/v1/accounts/0x1/transactions?start=3&limit=5",
    );
  });

  it("encodes a path value, so that it cannot reach another route", () => {
    const request = aptosRequest("testnet", "transaction_by_version", { txn_version: "1/../../blocks" });
    expect(request.path).toBe("/aptos/testnet/v1/transactions/by_version/1%2F..%2F..%2Fblocks");
  });

  it("repeats as a curl command with the key header", () => {
    expect(curlCommand(aptosRequest("testnet", "transactions", { start: "100", limit: "10" }), "https://bg.example", "bg_k")).toBe(
      "curl -s 'https://bg.example/aptos/testnet/v1/transactions?start=100&limit=10' -H 'X-API-KEY: bg_k'",
    );
  });
});

describe("the Aptos form", () => {
  it("fills required parameters from the index until they are edited, and leaves optional ones empty", () => {
    expect(aptosValues("transaction_by_hash", undefined, EXAMPLES)).toEqual({ txn_hash: HASH });
    expect(aptosValues("transaction_by_version", undefined, EXAMPLES)).toEqual({ txn_version: "5117" });
    expect(aptosValues("block_by_height", undefined, EXAMPLES)).toEqual({ block_height: "1204", with_transactions: "false" });
    expect(aptosValues("account_transactions", undefined, EXAMPLES)).toEqual({ address: SENDER, start: "", limit: "" });
    expect(aptosValues("block_by_height", { block_height: "" }, EXAMPLES)).toEqual({ block_height: "", with_transactions: "false" });
    expect(aptosValues("transaction_by_hash", undefined, undefined)).toEqual({ txn_hash: "" });
    expect(aptosExampleFor("address", { ...EXAMPLES, transaction: { version: "1", hash: HASH, sender: null } })).toBeNull();
  });

  it("asks for a missing path parameter, and names invalid ones", () => {
    expect(checkAptosForm("transaction_by_hash", { txn_hash: "  " })).toEqual({
      checks: { txn_hash: { missing: true, error: null, query: null } },
      blocker: "Enter txn_hash to send.",
      cu: APTOS_ROUTES.transaction_by_hash.cu,
    });
    const bad = checkAptosForm("account_transactions", { address: "0xzz", start: "-1", limit: "101" });
    expect(bad.blocker).toBe("Fix address, start and limit to send.");
    expect(bad.checks.address?.error).toBe("Enter 1 to 64 hex digits, with or without 0x.");
    expect(bad.checks.start?.error).toBe("Enter a whole number (digits only).");
    expect(bad.checks.limit?.error).toBe(`Enter a number from 1 to ${APTOS_PAGE_MAX}.`);
    expect(checkAptosField(param("transaction_by_version", "txn_version"), "18446744073709551616").error).toBe("Enter at most 18446744073709551615.");
    expect(checkAptosField(param("transaction_by_hash", "txn_hash"), "0xabc").error).toBe("Enter 64 hex digits, with or without 0x.");
  });

  it("takes exactly the values the endpoint takes", () => {
    const text = fc.oneof(
      fc.stringMatching(/^[0-9]{0,22}$/),
      fc.stringMatching(/^(0x)?[0-9a-fA-F]{0,66}$/),
      fc.constantFrom("true", "false", "0", "100", "101", "65536", "1e3", "+5", "TRUE"),
      fc.string({ maxLength: 8 }),
    );
    const names = [...new Set(APTOS_PLAYGROUND_ROUTES.flatMap((r) => APTOS_ROUTES[r].params.map((p) => `${r}:${p.name}`)))];
    fc.assert(
      fc.property(fc.constantFrom(...names), text, (key, value) => {
        const [route, name] = key.split(":") as [AptosRoute, string];
        const check = checkAptosField(param(route, name), value);
        const trimmed = value.trim();
        if (trimmed === "") return;
        expect(check.error === null, `${name}=${JSON.stringify(value)}`).toBe(endpointTakes(name, trimmed));
      }),
      { numRuns: 2000 },
    );
  });

  it("describes each parameter's type, and shows it with the right widget", () => {
    expect(aptosTypeSummary(param("transactions", "limit"))).toBe(`integer 1–${APTOS_PAGE_MAX} · default 25 · optional`);
    expect(aptosTypeSummary(param("transaction_by_hash", "txn_hash"))).toBe("hex, 64 digits, 0x optional · required");
    expect(aptosFieldSpec(param("block_by_height", "with_transactions"))).toMatchObject({ type: "bool", default: "false", required: false });
    expect(aptosFieldSpec(param("block_by_height", "block_height"))).toMatchObject({ type: "int", required: true });
  });
});

describe("classify, for a REST answer", () => {
  it("takes any JSON body with a 2xx as the result, and reads the Aptos error code", () => {
    expect(classify(200, [{ type: "user_transaction" }], "rest")).toEqual({ kind: "result" });
    expect(classify(200, { chain_id: 105 }, "rest")).toEqual({ kind: "result" });
    expect(classify(200, undefined, "rest")).toEqual({ kind: "unexpected", message: "The answer is not JSON." });
    expect(classify(404, { message: "Transaction not found by Ledger version(9)", error_code: "transaction_not_found", vm_error_code: null }, "rest")).toEqual({
      kind: "http-error",
      code: "transaction_not_found",
      message: "Transaction not found by Ledger version(9)",
    });
    expect(classify(401, { code: "INVALID_API_KEY", message: "Unknown key." }, "rest")).toEqual({ kind: "http-error", code: "INVALID_API_KEY", message: "Unknown key." });
  });
});
