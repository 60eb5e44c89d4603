import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maskExcerpt, maskRequestLine, REQUEST_LOG_ROWS, Ring, type RequestLogEntry } from ".";

// A ring copies entries' texts one after another into one buffer, wrapping: these runs change the
// texts' sizes between and within takes and take at random moments (also just after a wrap), and
// check that every take answers exactly the newest entries pushed since the last, texts intact.

const ascii = (min: number, max: number) => fc.string({ unit: "binary-ascii", minLength: min, maxLength: max });
const text = (kind: "small" | "large" | "mixed") =>
  kind === "small"
    ? fc.option(ascii(0, 40), { nil: undefined })
    : kind === "large"
      ? ascii(150, 240)
      : fc.oneof(
          fc.constant(undefined),
          ascii(0, 500),
          fc.string({ unit: "binary", maxLength: 300 }),
          fc.string({ maxLength: 2500 }),
          fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a)),
        );
const phase = fc.constantFrom("small" as const, "large" as const, "mixed" as const).chain((kind) =>
  fc.record({
    entries: fc.array(
      fc.record({
        params: text(kind),
        result: text(kind),
        url: kind === "mixed" ? ascii(0, 120) : fc.constant(""),
        // Columns that mostly repeat (a ring writes a slot's string only when it changes).
        keyId: fc.constantFrom("k1", "k1", "k1", "k2"),
        statusClass: fc.constantFrom("2xx" as const, "2xx" as const, "rpc_error" as const),
        httpMethod: fc.constantFrom("POST", "POST", "GET"),
        // A take right after this entry: at any moment, also just after an entry had little room.
        take: fc.noBias(fc.nat(700)).map((n) => n === 0),
      }),
      { minLength: 100, maxLength: 1400, size: "max" },
    ),
  }),
);

const bytes = (t: string | Buffer | undefined) => (t === undefined ? 0 : typeof t === "string" ? Buffer.byteLength(t) : t.length);
/** Most bytes an entry's texts held by reference can count: none when its texts fit its 512 bytes (held copies may sit in Buffer's 8 KB pool). */
const mayHold = (e: RequestLogEntry) =>
  bytes(e.requestId) + bytes(e.method) + bytes(e.url) + bytes(e.params) + bytes(e.result) <= 512 ? 0 : [e.params, e.result].reduce((n, t) => n + (t === undefined ? 0 : 8192 + 4 * bytes(t)), 0);

const excerpt = (t: string | Buffer | undefined) => maskExcerpt(t === undefined ? "" : typeof t === "string" ? t.slice(0, 2112) : t.toString("utf8", 0, Math.min(t.length, 2112)));

describe("a project's ring of request log entries", () => {
  it("answers at each take exactly the newest entries pushed since the last, whatever their texts' sizes", () => {
    fc.assert(
      fc.property(fc.array(phase, { minLength: 2, maxLength: 6, size: "max" }), (phases) => {
        const ring = new Ring();
        let since: RequestLogEntry[] = [];
        let n = 0;
        const take = () => {
          const kept = since.slice(-REQUEST_LOG_ROWS);
          expect(ring.size).toBe(kept.length);
          expect(ring.superseded).toBe(since.length - kept.length);
          // Texts held by reference are those of the entries kept, never of overwritten ones.
          expect(ring.heldBytes).toBeLessThanOrEqual(kept.reduce((n, e) => n + mayHold(e), 0));
          const rows = ring.take("p");
          expect(rows.map((r) => [r.request_id, r.key_id, r.status_class, r.path, r.params, r.result])).toEqual(
            kept.map((e) => [e.requestId, e.keyId, e.statusClass, maskRequestLine(`${e.httpMethod} ${e.url}`), excerpt(e.params), excerpt(e.result)]),
          );
          expect(ring.size).toBe(0);
          expect(ring.heldBytes).toBe(0);
          since = [];
        };
        for (const { entries } of phases) {
          for (const { params, result, url, keyId, statusClass, httpMethod, take: takeAfter } of entries) {
            const e: RequestLogEntry = {
              projectId: "p",
              keyId,
              requestId: `req_${n++}`,
              at: n,
              api: "node",
              network: "x",
              method: "eth_call",
              calls: 1,
              status: 200,
              statusClass,
              latencyMs: 1,
              cu: 1,
              httpMethod,
              url: `/node/x${url}`,
              params,
              result,
            };
            ring.push(e);
            since.push(e);
            if (takeAfter) take();
          }
        }
        take();
      }),
      { numRuns: 40, seed: 20261126 },
    );
  });

  it("lets go of the texts it held by reference once newer entries overwrite them", () => {
    const ring = new Ring();
    const entry = (i: number, body: string): RequestLogEntry => ({
      projectId: "p",
      keyId: "k",
      requestId: `req_${i}`,
      at: i,
      api: "node",
      network: "x",
      method: "eth_call",
      calls: 1,
      status: 200,
      statusClass: "2xx",
      latencyMs: 1,
      cu: 1,
      httpMethod: "POST",
      url: "/node/x",
      params: body,
      result: body,
    });
    for (let i = 0; i < REQUEST_LOG_ROWS; i++) ring.push(entry(i, "x".repeat(600)));
    // A 600-character body does not fit an entry's 512 bytes: both are held (600 UTF-16 characters each).
    expect(ring.heldBytes).toBe(REQUEST_LOG_ROWS * 2400);
    for (let i = 0; i < REQUEST_LOG_ROWS / 2; i++) ring.push(entry(REQUEST_LOG_ROWS + i, "[]"));
    expect(ring.heldBytes).toBe((REQUEST_LOG_ROWS / 2) * 2400);
    for (let i = 0; i < REQUEST_LOG_ROWS / 2; i++) ring.push(entry(2 * REQUEST_LOG_ROWS + i, "[]"));
    expect(ring.heldBytes).toBe(0);
    expect(ring.take("p").map((r) => r.params)).toEqual(Array.from({ length: REQUEST_LOG_ROWS }, () => "[]"));
  });
});
