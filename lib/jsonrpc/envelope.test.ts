import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { databaseUnavailableError } from "@/lib/errors";
import { RateLimiter, throughputRefusal } from "@/lib/gateway/limits";
import { failure, MAX_BATCH, MAX_DEPTH, parseBody, refuseBody, respondOne, type Answer, type Body, type Dialect } from "./envelope";
import { internalError, invalidParams, InvalidRequest, RateLimited, RpcError, Unavailable } from "./errors";

const EVM: Dialect = { messageAsData: false, rawResults: false };
const COMET: Dialect = { messageAsData: true, rawResults: true };

function parse(text: string, dialect = EVM): Body {
  const body = parseBody(Buffer.from(text), dialect);
  if (body instanceof RpcError) throw new Error(`refused: ${body.message}`);
  return body;
}

function refusal(text: string, dialect = EVM): RpcError {
  const body = parseBody(Buffer.from(text), dialect);
  if (!(body instanceof RpcError)) throw new Error("parsed");
  return body;
}

/** Answers every item as a trivial method would (result: the method name), then the HTTP answer. */
function serve(text: string, dialect = EVM, answer?: (i: number) => Answer | undefined) {
  const body = parse(text, dialect);
  const answers: Answer[] = [];
  for (let i = 0; i < body.size; i++) {
    const req = body.request(i);
    answers.push(req instanceof InvalidRequest ? failure(req.id, req) : (answer?.(i) ?? { jsonrpc: "2.0", id: body.id(i, req), result: req.method }));
  }
  const r = body.respond(answers);
  const wire = r.body === undefined ? undefined : typeof r.body === "string" ? r.body : JSON.stringify(r.body);
  return { status: r.status, headers: r.headers, wire, json: wire === undefined ? undefined : (JSON.parse(wire) as unknown) };
}

const rpc = (id: string, method = "m") => `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;

/**
 * A real refusal of the rate limiter: a free project (300 CU/s) asking for 5 CU once its second is
 * spent, `debt` CU past it (one dearer call runs on a full bucket and leaves it in debt).
 */
function rateLimited(debt = 0): RateLimited {
  const limiter = new RateLimiter();
  const who = { projectId: "project", ownerId: "owner", plan: "FREE" as const };
  limiter.take(who, 300 + debt);
  const wait = limiter.take(who, 5);
  if (wait === 0) throw new Error("not refused");
  return new RateLimited(throughputRefusal(who.plan, wait));
}

describe("parseBody", () => {
  it("answers what is not JSON with −32700 and id null", () => {
    for (const text of ["{not json", '{"jsonrpc":"2.0"', "", "\u0000", "[1,]", "01"]) {
      expect(refuseBody(refusal(text)), text).toEqual({
        status: 200,
        body: { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32700, message: "Parse error: the body is not valid JSON" }) },
      });
    }
    expect(JSON.parse(JSON.stringify(refuseBody(refusal("{", COMET)).body))).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error: the body is not valid JSON", data: "Parse error: the body is not valid JSON" },
    });
  });

  it(`refuses a body nested deeper than ${MAX_DEPTH} levels with −32600 saying the limit, before parsing it`, () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"m","params":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const e = refusal(deep);
    expect(e.toJSON()).toEqual({ code: -32600, message: `Invalid Request: the body nests arrays and objects deeper than ${MAX_DEPTH} levels` });
    expect(refuseBody(e).body).toMatchObject({ id: null });
    // Unterminated: refused for its depth without being read any further.
    expect(refusal("[".repeat(1_000_000)).code).toBe(-32600);
    // The limit itself is fine: the request object is level 1, its params 2 and so on.
    const atLimit = `{"jsonrpc":"2.0","id":1,"method":"m","params":${"[".repeat(MAX_DEPTH - 1)}${"]".repeat(MAX_DEPTH - 1)}}`;
    expect(serve(atLimit).json).toEqual({ jsonrpc: "2.0", id: 1, result: "m" });
    expect(refusal(`[${atLimit}]`).code).toBe(-32600);
  });

  it(`takes batches of 1 to ${MAX_BATCH} items`, () => {
    expect(refusal("[]").toJSON()).toEqual({ code: -32600, message: "Invalid Request: the batch is empty" });
    const batch = (n: number) => `[${Array.from({ length: n }, (_, i) => rpc(String(i))).join(",")}]`;
    expect(refusal(batch(MAX_BATCH + 1)).toJSON()).toEqual({ code: -32600, message: `Invalid Request: a batch holds at most ${MAX_BATCH} requests` });
    expect(serve(batch(MAX_BATCH)).json).toHaveLength(MAX_BATCH);
    expect(serve(batch(1)).json).toEqual([{ jsonrpc: "2.0", id: 0, result: "m" }]);
  });
});

describe("Body.request", () => {
  it("answers each kind of invalid request object with −32600, with its id when it could be read", () => {
    const cases: Array<[string, unknown, string]> = [
      ["42", null, "expected a JSON-RPC 2.0 request object"],
      ['"m"', null, "expected a JSON-RPC 2.0 request object"],
      ["null", null, "expected a JSON-RPC 2.0 request object"],
      ["true", null, "expected a JSON-RPC 2.0 request object"],
      ['{"id":1,"method":"m"}', 1, '"jsonrpc" must be "2.0"'],
      ['{"jsonrpc":2,"id":"a","method":"m"}', "a", '"jsonrpc" must be "2.0"'],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', null, '"id" must be a string, a number or null'],
      ['{"jsonrpc":"2.0","id":[1],"method":"m"}', null, '"id" must be a string, a number or null'],
      ['{"jsonrpc":"2.0","id":true,"method":"m"}', null, '"id" must be a string, a number or null'],
      ['{"jsonrpc":"1.0","id":true,"method":"m"}', null, '"jsonrpc" must be "2.0"'],
      ['{"jsonrpc":"2.0","id":2}', 2, '"method" must be a non-empty string'],
      ['{"jsonrpc":"2.0","id":3,"method":""}', 3, '"method" must be a non-empty string'],
      ['{"jsonrpc":"2.0","id":4,"method":7}', 4, '"method" must be a non-empty string'],
      ['{"jsonrpc":"2.0","id":5,"method":"m","params":"x"}', 5, '"params" must be an array or an object'],
      ['{"jsonrpc":"2.0","id":6,"method":"m","params":null}', 6, '"params" must be an array or an object'],
      ['{"jsonrpc":"2.0","id":null,"method":"m","params":3}', null, '"params" must be an array or an object'],
      // Invalid requests are answered even without an id: they are no notifications.
      ['{"jsonrpc":"2.0","method":7}', null, '"method" must be a non-empty string'],
    ];
    for (const [text, id, problem] of cases) {
      expect(serve(text), text).toEqual({ status: 200, headers: undefined, wire: expect.any(String), json: { jsonrpc: "2.0", id, error: { code: -32600, message: `Invalid Request: ${problem}` } } });
      // Inside a batch the same, in its place.
      expect(serve(`[${rpc("0")},${text}]`).json, text).toEqual([
        { jsonrpc: "2.0", id: 0, result: "m" },
        { jsonrpc: "2.0", id, error: { code: -32600, message: `Invalid Request: ${problem}` } },
      ]);
    }
    expect(serve("[1,[2]]").json).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: expected a JSON-RPC 2.0 request object" } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: expected a JSON-RPC 2.0 request object" } },
    ]);
    // CometBFT's form repeats the message as data.
    expect(serve('{"jsonrpc":"2.0","id":3,"method":""}', COMET).json).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32600, message: 'Invalid Request: "method" must be a non-empty string', data: 'Invalid Request: "method" must be a non-empty string' },
    });
  });

  it("accepts params as an array or an object, or none", () => {
    for (const params of ["[]", "[1,{}]", "{}", '{"a":[1]}']) {
      expect(serve(`{"jsonrpc":"2.0","id":1,"method":"m","params":${params}}`).json).toEqual({ jsonrpc: "2.0", id: 1, result: "m" });
    }
  });
});

describe("ids", () => {
  it("echoes a number exactly as the caller wrote it", () => {
    for (const id of ["123456789012345678901234567890", "1.0e3", "-0", "12.50", "1E+2", "0.1", "-7", "9007199254740993", "1e400", "5e-324", "0"]) {
      expect(serve(rpc(id)).wire, id).toBe(`{"jsonrpc":"2.0","id":${id},"result":"m"}`);
      expect(serve(`[${rpc(id)},${rpc(`-${id.replace(/^-/, "")}`)}]`).wire, id).toBe(
        `[{"jsonrpc":"2.0","id":${id},"result":"m"},{"jsonrpc":"2.0","id":-${id.replace(/^-/, "")},"result":"m"}]`,
      );
      expect(serve(rpc(id), COMET).wire, id).toBe(`{"jsonrpc":"2.0","id":${id},"result":"m"}`);
    }
  });

  it("echoes the id of an invalid request verbatim too", () => {
    expect(serve('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":""}').wire).toBe(
      '{"jsonrpc":"2.0","id":123456789012345678901234567890,"error":{"code":-32600,"message":"Invalid Request: \\"method\\" must be a non-empty string"}}',
    );
  });

  it("answers the common case without writing raw text (JSON.stringify of the answer object)", () => {
    const body = parse(rpc("1"));
    const req = body.request(0);
    if (req instanceof InvalidRequest) throw req;
    expect(body.id(0, req)).toBe(1);
    expect(body.respond([{ jsonrpc: "2.0", id: 1, result: "0x1" }]).body).toEqual({ jsonrpc: "2.0", id: 1, result: "0x1" });
  });

  it("keeps strings and null as they are", () => {
    expect(serve(rpc('"a\\"b"')).json).toEqual({ jsonrpc: "2.0", id: 'a"b', result: "m" });
    expect(serve(rpc('""')).json).toEqual({ jsonrpc: "2.0", id: "", result: "m" });
    expect(serve(rpc("null")).json).toEqual({ jsonrpc: "2.0", id: null, result: "m" });
  });

  it("uses the parsed value when an object repeats its id member (JSON.parse keeps the last)", () => {
    expect(serve('{"jsonrpc":"2.0","id":1.0,"id":2.0,"method":"m"}').wire).toBe('{"jsonrpc":"2.0","id":2,"result":"m"}');
  });

  it("finds the id wherever it stands among members, params, strings and whitespace (property)", () => {
    const digits = fc.stringMatching(/^(0|[1-9][0-9]{0,30})$/);
    const token = fc
      .tuple(fc.boolean(), digits, fc.option(fc.stringMatching(/^[0-9]{1,5}$/)), fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.stringMatching(/^[0-9]{1,3}$/))))
      .map(([neg, int, frac, exp]) => `${neg ? "-" : ""}${int}${frac === null ? "" : `.${frac}`}${exp === null ? "" : exp.join("")}`);
    const space = fc.constantFrom("", " ", "\n  ", "\t");
    const member = fc.constantFrom('"params":[{"id":1.5},{"x":{"id":2}}]', '"note":"\\"id\\":3"', '"params":{"id":"4","y":[[{"id":5e1}]]}', '"x":null');
    const request = fc.tuple(token, space, fc.array(member, { maxLength: 3 }), fc.nat()).map(([id, sp, others, at]) => {
      const members = ['"jsonrpc":"2.0"', '"method":"m"', ...others];
      members.splice(at % (members.length + 1), 0, `"id"${sp}:${sp}${id}`);
      return { id, text: `{${sp}${members.join(`${sp},${sp}`)}${sp}}` };
    });
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 5 }), fc.boolean(), (requests, single) => {
        if (single) {
          expect(serve(requests[0]!.text).wire).toBe(`{"jsonrpc":"2.0","id":${requests[0]!.id},"result":"m"}`);
        } else {
          const expected = requests.map((r) => `{"jsonrpc":"2.0","id":${r.id},"result":"m"}`).join(",");
          expect(serve(`[${requests.map((r) => r.text).join(",")}]`).wire).toBe(`[${expected}]`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("notifications", () => {
  const note = '{"jsonrpc":"2.0","method":"n"}';

  it("answers a single notification with 204 and no body", () => {
    expect(serve(note)).toEqual({ status: 204, headers: undefined, wire: undefined, json: undefined });
    expect(serve('{"jsonrpc":"2.0","method":"n","params":[1]}').status).toBe(204);
  });

  it('answers "id": null like any id', () => {
    expect(serve(rpc("null")).json).toEqual({ jsonrpc: "2.0", id: null, result: "m" });
  });

  it("answers only the requests with ids of a mixed batch, in order; 204 for notifications only", () => {
    expect(serve(`[${note},${rpc("1", "a")},${note},${rpc('"x"', "b")},${rpc("null", "c")},${note}]`).json).toEqual([
      { jsonrpc: "2.0", id: 1, result: "a" },
      { jsonrpc: "2.0", id: "x", result: "b" },
      { jsonrpc: "2.0", id: null, result: "c" },
    ]);
    expect(serve(`[${note},${note},${note}]`).status).toBe(204);
    // An invalid item is answered, even among notifications.
    expect(serve(`[${note},{"jsonrpc":"2.0","method":""}]`).json).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } }]);
  });

  it("drops a notification's error answer too", () => {
    expect(serve(`[${note},${rpc("1")}]`, EVM, (i) => (i === 0 ? failure(null, { code: -32601, message: "no" }) : undefined)).json).toEqual([
      { jsonrpc: "2.0", id: 1, result: "m" },
    ]);
  });
});

describe("the rate-limit rule", () => {
  it("answers HTTP 429 with Retry-After when every item was refused, a single request or a whole batch", () => {
    const limited = rateLimited();
    const expected = { status: 429, headers: { "Retry-After": "1" }, json: { code: "TOO_MANY_REQUESTS", message: expect.stringContaining("300 CU per second") } };
    expect(serve(rpc("1"), EVM, () => failure(1, limited))).toMatchObject(expected);
    expect(serve(`[${rpc("1")},${rpc("2")}]`, EVM, (i) => failure(i + 1, limited))).toMatchObject(expected);
    expect(serve('{"jsonrpc":"2.0","method":"n"}', EVM, () => failure(null, limited))).toMatchObject(expected);
    // The refusal's answer is made once, its body written out already.
    const one = respondOne(failure(-1, limited), COMET);
    expect({ ...one, body: JSON.parse(one.body as string) as unknown }).toEqual({ status: 429, body: expected.json, headers: { "Retry-After": "1" } });
    expect(respondOne(failure(-2, limited), COMET)).toBe(one);
    // The longest wait of the refused items.
    const later = rateLimited(700);
    expect(later.retryAfter).toBe(3);
    expect(serve(`[${rpc("1")},${rpc("2")}]`, EVM, (i) => failure(i, i === 0 ? limited : later)).headers).toEqual({ "Retry-After": "3" });
  });

  it("answers −32005 with retryAfter in place when other items ran or were refused for another reason", () => {
    const limited = rateLimited();
    const refused = { jsonrpc: "2.0", id: 2, error: { code: -32005, message: limited.message, data: { retryAfter: 1 } } };
    expect(serve(`[${rpc("1")},${rpc("2")}]`, EVM, (i) => (i === 1 ? failure(2, limited) : undefined)).json).toEqual([{ jsonrpc: "2.0", id: 1, result: "m" }, refused]);
    expect(serve(`[42,${rpc("2")}]`, EVM, (i) => (i === 1 ? failure(2, limited) : undefined)).json).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } },
      refused,
    ]);
    // A node's own −32005 is an answer like any other.
    expect(serve(rpc("1"), EVM, () => failure(1, { code: -32005, message: "node busy" })).json).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32005, message: "node busy" } });
  });
});

describe("the database-unavailable rule", () => {
  /** What a call answers when the database is unreachable (lib/errors.ts: 503 UNAVAILABLE, Retry-After 5). */
  const unavailable = () => new Unavailable(databaseUnavailableError());
  const message = "The service's database is unreachable at the moment. Please retry shortly.";
  const item = (id: number | null) => ({ jsonrpc: "2.0", id, error: { code: -32002, message, data: { retryAfter: 5 } } });

  it("answers the JSON-RPC errors with HTTP 503 and Retry-After when no item could be served", () => {
    expect(serve(rpc("1"), EVM, () => failure(1, unavailable()))).toEqual({ status: 503, headers: { "Retry-After": "5" }, wire: expect.any(String), json: item(1) });
    expect(serve(`[${rpc("1")},${rpc("2")}]`, COMET, (i) => failure(i + 1, unavailable()))).toMatchObject({ status: 503, headers: { "Retry-After": "5" }, json: [item(1), item(2)] });
    expect(respondOne(failure(-1, unavailable()), COMET)).toMatchObject({ status: 503, headers: { "Retry-After": "5" } });
    expect(JSON.parse(respondOne(failure(-1, unavailable()), COMET).body as string)).toEqual(item(-1));
    // Only notifications: no answers to send, so the refusal itself.
    expect(serve('{"jsonrpc":"2.0","method":"n"}', EVM, () => failure(null, unavailable()))).toMatchObject({ status: 503, headers: { "Retry-After": "5" }, json: { code: "UNAVAILABLE", message } });
  });

  it("answers HTTP 200 with −32002 in place when other items were served", () => {
    expect(serve(`[${rpc("1")},${rpc("2")}]`, EVM, (i) => (i === 1 ? failure(2, unavailable()) : undefined))).toMatchObject({
      status: 200,
      json: [{ jsonrpc: "2.0", id: 1, result: "m" }, item(2)],
    });
    expect(serve(`[${rpc("1")},${rpc("2")}]`, EVM, (i) => failure(i + 1, i === 0 ? rateLimited() : unavailable()))).toMatchObject({ status: 200 });
  });
});

describe("errors", () => {
  it("write code, message and data when there is some", () => {
    expect(JSON.stringify(new RpcError(-32603, "boom"))).toBe('{"code":-32603,"message":"boom"}');
    expect(invalidParams("height is required").toJSON()).toEqual({ code: -32602, message: "Invalid params: height is required", data: "height is required" });
    expect(internalError("no blocks yet").toJSON()).toEqual({ code: -32603, message: "no blocks yet", data: "no blocks yet" });
    expect(rateLimited().toJSON()).toEqual({ code: -32005, message: expect.stringMatching(/^Rate limit of 300 CU per second exceeded.*Retry after 1 s/), data: { retryAfter: 1 } });
  });
});
