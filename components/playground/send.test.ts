import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/components/api-client";
import { classify, curlCommand, exchangeOf, LatestRequest, requestUrl, retryAfterText, sendRequest, type Answer, type PlaygroundRequest } from "./send";

/** What the stand-in endpoint last received. */
let received: { method?: string; url?: string; headers: IncomingMessage["headers"]; body: string } = { headers: {}, body: "" };
/** Requests to /slow wait here until released. */
const held: ServerResponse[] = [];

let server: Server;
let origin: string;

function answer(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": "req_test", ...headers });
  res.end(body);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      received = { method: req.method, url: req.url, headers: req.headers, body };
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/result") return answer(res, 200, JSON.stringify({ jsonrpc: "2.0", id: 1, result: { echo: body } }));
      if (path === "/rpc-error") return answer(res, 200, JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Invalid params: x", data: "x" } }));
      if (path === "/limited") return answer(res, 429, JSON.stringify({ code: "TOO_MANY_REQUESTS", message: "Slow down." }), { "Retry-After": "2" });
      if (path === "/bad-gateway") return answer(res, 502, "<html>Bad Gateway</html>", { "Content-Type": "text/html" });
      if (path === "/not-json") return answer(res, 200, "plain words");
      if (path === "/slow") return void held.push(res);
      answer(res, 404, JSON.stringify({ code: "NOT_FOUND", message: "No such path." }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const key = async () => "bg_test";
const get = (path: string, query?: Array<[string, string]>): PlaygroundRequest => ({ method: "GET", path, query });
const send = (request: PlaygroundRequest, signal = new AbortController().signal, secret = key) => sendRequest(requestUrl(request, origin), request, secret, signal);

function response(a: Answer | null) {
  if (a?.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(a)}`);
  return a;
}

describe("sendRequest against a real HTTP server", () => {
  it("sends a GET with the key and the encoded query, and reads a JSON-RPC result", async () => {
    const a = response(await send(get("/result", [["query", "a = 'b'"]])));
    expect(received.method).toBe("GET");
    expect(received.url).toBe("/result?query=a%20%3D%20%27b%27");
    expect(received.headers["x-api-key"]).toBe("bg_test");
    expect(received.headers.accept).toBe("application/json");
    expect(a).toMatchObject({ status: 200, statusText: "OK", requestId: "req_test", retryAfter: null, outcome: { kind: "result" }, json: { result: { echo: "" } } });
    expect(a.ms).toBeGreaterThanOrEqual(0);
  });

  it("posts a body with the request's headers", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    const a = response(await send({ method: "POST", path: "/result", headers: { "Content-Type": "application/json" }, body }));
    expect(received).toMatchObject({ method: "POST", body, headers: { "content-type": "application/json", "x-api-key": "bg_test" } });
    expect(a.json).toEqual({ jsonrpc: "2.0", id: 1, result: { echo: body } });
  });

  it("tells JSON-RPC errors, HTTP errors and answers that are not JSON apart", async () => {
    expect(response(await send(get("/rpc-error"))).outcome).toEqual({ kind: "rpc-error", code: -32602, message: "Invalid params: x", data: "x" });
    const limited = response(await send(get("/limited")));
    expect(limited).toMatchObject({ status: 429, retryAfter: "2", outcome: { kind: "http-error", code: "TOO_MANY_REQUESTS", message: "Slow down." } });
    const gateway = response(await send(get("/bad-gateway")));
    expect(gateway).toMatchObject({ status: 502, text: "<html>Bad Gateway</html>", json: undefined, outcome: { kind: "http-error", code: null, message: "The request failed with HTTP 502." } });
    expect(response(await send(get("/not-json"))).outcome).toEqual({ kind: "unexpected", message: "The answer is not JSON." });
  });

  it("says so when the endpoint cannot be reached or the key cannot be loaded", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const request = get("/result");
    expect(await sendRequest(`http://127.0.0.1:${port}/result`, request, key, new AbortController().signal)).toEqual({
      kind: "failed",
      message: "Could not reach the endpoint. Check your connection and try again.",
    });
    const noKey = () => Promise.reject(new ApiError(404, "NOT_FOUND", "The key no longer exists."));
    expect(await send(request, undefined, noKey)).toEqual({ kind: "failed", message: "Could not load your API key. The key no longer exists." });
  });

  it("aborts the request in flight when a newer one starts: only the newer one answers", async () => {
    const latest = new LatestRequest();
    const first = latest.start();
    const slow = send(get("/slow"), first.signal);
    await expect.poll(() => held.length).toBe(1);
    const second = latest.start();
    expect(first.signal.aborted).toBe(true);
    expect(first.isLatest()).toBe(false);
    expect(await slow).toBeNull();
    expect(response(await send(get("/result"), second.signal)).outcome.kind).toBe("result");
    expect(second.isLatest()).toBe(true);
    latest.abort();
    expect(second.signal.aborted).toBe(true);
  });
});

describe("the exchange shown", () => {
  const sent = { seq: 1, networkName: "Babylon", method: "block", httpMethod: "GET" as const, path: "/rpc/babylon-mainnet/block" };
  const raw = { status: 200, statusText: "OK", ms: 5, requestId: null, retryAfter: null, text: "{}", json: {} };

  it("charges the method's CU for a result and nothing for an error", () => {
    expect(exchangeOf(sent, { ...raw, kind: "response", outcome: { kind: "result" } }, 25)).toMatchObject({ kind: "response", cu: 25, path: sent.path });
    expect(exchangeOf(sent, { ...raw, kind: "response", outcome: { kind: "rpc-error", code: -32603, message: "m", data: null } }, 25)).toMatchObject({ cu: 0 });
    expect(exchangeOf(sent, { kind: "failed", message: "down" }, 25)).toEqual({ ...sent, kind: "failed", message: "down" });
  });

  it("classifies answers", () => {
    expect(classify(200, { jsonrpc: "2.0", id: -1, result: {} })).toEqual({ kind: "result" });
    expect(classify(200, { jsonrpc: "2.0", id: -1, error: {} })).toEqual({ kind: "rpc-error", code: null, message: "The endpoint answered with an error.", data: undefined });
    expect(classify(401, { message: "No key." })).toEqual({ kind: "http-error", code: null, message: "No key." });
    expect(classify(200, { jsonrpc: "2.0" })).toEqual({ kind: "unexpected", message: "The answer has neither a result nor an error." });
  });

  it("writes a curl command for any method, quoting what the shell would misread", () => {
    expect(curlCommand({ method: "POST", path: "/hooks/x" }, "https://bg.example", "bg_k")).toBe("curl -s -X POST 'https://bg.example/hooks/x' -H 'X-API-KEY: bg_k'");
    expect(curlCommand({ method: "GET", path: "/v1/accounts", query: [["q", "it's"]], headers: { Accept: "application/json" } }, "https://bg.example", "bg_k")).toBe(
      "curl -s 'https://bg.example/v1/accounts?q=it%27s' -H 'Accept: application/json' -H 'X-API-KEY: bg_k'",
    );
  });
});

describe("retryAfterText", () => {
  it("says a short wait in seconds, a long one in hours and minutes with the UTC time it ends", () => {
    const now = Date.UTC(2026, 10, 26, 6, 5, 45);
    expect(retryAfterText("2", now)).toBe("2 s");
    expect(retryAfterText("119", now)).toBe("119 s");
    expect(retryAfterText("600", now)).toBe("10 min (at 06:15 UTC)");
    // The free plan's day: resets at 00:00 UTC the next day.
    expect(retryAfterText(String((Date.UTC(2026, 10, 27) - now) / 1000), now)).toBe("17 h 55 min (at 00:00 UTC, 2026-11-27)");
    expect(retryAfterText("Fri, 27 Nov 2026 00:00:00 GMT", now)).toBe("17 h 55 min (at 00:00 UTC, 2026-11-27)");
    expect(retryAfterText("soon", now)).toBe("soon");
  });
});
