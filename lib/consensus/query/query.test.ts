import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { attributeTime, dayBounds, leadingNumber } from "./literals";
import { MAX_CONDITIONS, MAX_QUERY_LENGTH, parseQuery, type Condition, type Query } from "./parse";
import { compileBlockQuery, compileTxCount, compileTxQuery } from "./sql";

function parse(input: string): Query {
  const result = parseQuery(input);
  if (!result.ok) throw new Error(`unexpected ${result.error.message}`);
  return result.query;
}

const conditions = (input: string) => parse(input).conditions;

describe("parseQuery: valid queries", () => {
  it.each<[string, Condition[]]>([
    ["tx.height = 5", [{ key: "tx.height", op: "=", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["tx.height=5", [{ key: "tx.height", op: "=", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["tx.height<5", [{ key: "tx.height", op: "<", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["tx.height<=5", [{ key: "tx.height", op: "<=", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["tx.height>5", [{ key: "tx.height", op: ">", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["tx.height >= 007.50", [{ key: "tx.height", op: ">=", operand: { kind: "number", value: "007.50" }, offset: 0 }]],
    ["block.height > 0.5", [{ key: "block.height", op: ">", operand: { kind: "number", value: "0.5" }, offset: 0 }]],
    ["message.action = 'send'", [{ key: "message.action", op: "=", operand: { kind: "string", value: "send" }, offset: 0 }]],
    ["message.action=''", [{ key: "message.action", op: "=", operand: { kind: "string", value: "" }, offset: 0 }]],
    ["memo.text = 'a = b AND c EXISTS'", [{ key: "memo.text", op: "=", operand: { kind: "string", value: "a = b AND c EXISTS" }, offset: 0 }]],
    ["transfer.sender CONTAINS 'cosmos1'", [{ key: "transfer.sender", op: "CONTAINS", operand: { kind: "string", value: "cosmos1" }, offset: 0 }]],
    ["transfer.sender CONTAINS'x y'", [{ key: "transfer.sender", op: "CONTAINS", operand: { kind: "string", value: "x y" }, offset: 0 }]],
    ["transfer.sender EXISTS", [{ key: "transfer.sender", op: "EXISTS", offset: 0 }]],
    ["my-event_type.attr_key-2 EXISTS", [{ key: "my-event_type.attr_key-2", op: "EXISTS", offset: 0 }]],
    ["unbond.completion_time = DATE 2026-01-02", [{ key: "unbond.completion_time", op: "=", operand: { kind: "date", value: "2026-01-02" }, offset: 0 }]],
    ["e.t < DATE 2024-02-29", [{ key: "e.t", op: "<", operand: { kind: "date", value: "2024-02-29" }, offset: 0 }]],
    ["e.t <= DATE 2026-12-31", [{ key: "e.t", op: "<=", operand: { kind: "date", value: "2026-12-31" }, offset: 0 }]],
    ["e.t > DATE 2000-02-29", [{ key: "e.t", op: ">", operand: { kind: "date", value: "2000-02-29" }, offset: 0 }]],
    ["e.t >= DATE 1900-01-01", [{ key: "e.t", op: ">=", operand: { kind: "date", value: "1900-01-01" }, offset: 0 }]],
    [
      "e.t = TIME 2026-01-02T15:04:05Z",
      [{ key: "e.t", op: "=", operand: { kind: "time", value: new Date("2026-01-02T15:04:05Z"), text: "2026-01-02T15:04:05Z" }, offset: 0 }],
    ],
    [
      "e.t >= TIME 2026-01-02T15:04:05+05:30",
      [{ key: "e.t", op: ">=", operand: { kind: "time", value: new Date("2026-01-02T09:34:05Z"), text: "2026-01-02T15:04:05+05:30" }, offset: 0 }],
    ],
    [
      "e.t < TIME 2999-12-31T23:00:00-01:00",
      [{ key: "e.t", op: "<", operand: { kind: "time", value: new Date("3000-01-01T00:00:00Z"), text: "2999-12-31T23:00:00-01:00" }, offset: 0 }],
    ],
    // As CometBFT's scanner: tags may start with '_' or '.', hold Unicode letters and digits; `5.` is a number.
    ["_x EXISTS", [{ key: "_x", op: "EXISTS", offset: 0 }]],
    [".x.y EXISTS", [{ key: ".x.y", op: "EXISTS", offset: 0 }]],
    ["événement.clé = 'é'", [{ key: "événement.clé", op: "=", operand: { kind: "string", value: "é" }, offset: 0 }]],
    ["tx.height = 1.", [{ key: "tx.height", op: "=", operand: { kind: "number", value: "1." }, offset: 0 }]],
    // TIME and DATE not followed by a space are tags.
    ["TIME=5", [{ key: "TIME", op: "=", operand: { kind: "number", value: "5" }, offset: 0 }]],
    ["DATE.x EXISTS", [{ key: "DATE.x", op: "EXISTS", offset: 0 }]],
    // CometBFT v1.0 takes '-' in tags (event types such as wasm-transfer).
    ["wasm-transfer.amount > 5", [{ key: "wasm-transfer.amount", op: ">", operand: { kind: "number", value: "5" }, offset: 0 }]],
    [
      "\t tx.height >= 10\tAND  transfer.amount > 8 AND\ttransfer.recipient = 'cosmos1xyz'  AND message.action EXISTS \n",
      [
        { key: "tx.height", op: ">=", operand: { kind: "number", value: "10" }, offset: 2 },
        { key: "transfer.amount", op: ">", operand: { kind: "number", value: "8" }, offset: 23 },
        { key: "transfer.recipient", op: "=", operand: { kind: "string", value: "cosmos1xyz" }, offset: 47 },
        { key: "message.action", op: "EXISTS", offset: 86 },
      ],
    ],
    [
      "a.b='x'AND c.d EXISTS",
      [
        { key: "a.b", op: "=", operand: { kind: "string", value: "x" }, offset: 0 },
        { key: "c.d", op: "EXISTS", offset: 11 },
      ],
    ],
  ])("%j", (input, expected) => {
    expect(conditions(input)).toEqual(expected);
  });

  it("keeps strings verbatim, including characters that are syntax elsewhere", () => {
    const hostile = `"; DROP TABLE x; -- \\ % _ $1 <= >= AND OR TIME`;
    expect(conditions(`memo.text = '${hostile}'`)).toEqual([{ key: "memo.text", op: "=", operand: { kind: "string", value: hostile }, offset: 0 }]);
  });

  it(`accepts exactly ${MAX_QUERY_LENGTH} characters`, () => {
    const input = `memo.text = '${"x".repeat(MAX_QUERY_LENGTH - 14)}'`;
    expect(input).toHaveLength(MAX_QUERY_LENGTH);
    expect(parseQuery(input).ok).toBe(true);
  });
});

/**
 * CometBFT's own syntax tests (internal/pubsub/query/syntax/syntax_test.go: TestParseValid, and
 * TestScannerErrors/TestScanner as operands of a condition), with cases read off its scanner.
 */
describe("parseQuery: accepts and refuses what CometBFT's parser does", () => {
  it.each<[string, boolean]>([
    // TestParseValid
    ["tm.events.type='NewBlock'", true],
    ["tm.events.type = 'NewBlock'", true],
    ["tm.events.name = ''", true],
    ["tm.events.type='TIME'", true],
    ["tm.events.type='DATE'", true],
    ["tm.events.type='='", true],
    ["tm.events.type='TIME", false],
    ["tm.events.type=TIME'", false],
    ["tm.events.type==", false],
    ["tm.events.type=NewBlock", false],
    [">==", false],
    ["tm.events.type 'NewBlock' =", false],
    ["tm.events.type>'NewBlock'", false],
    ["", false],
    ["=", false],
    ["='NewBlock'", false],
    ["tm.events.type=", false],
    ["tm.events.typeNewBlock", false],
    ["tm.events.type'NewBlock'", false],
    ["'NewBlock'", false],
    ["NewBlock", false],
    ["tm.events.type='NewBlock' AND abci.account.name='Igor'", true],
    ["tm.events.type='NewBlock' AND", false],
    ["tm.events.type='NewBlock' AN", false],
    ["tm.events.type='NewBlock' AN tm.events.type='NewBlockHeader'", false],
    ["AND tm.events.type='NewBlock' ", false],
    ["abci.account.name CONTAINS 'Igor'", true],
    ["tx.date > DATE 2013-05-03", true],
    ["tx.date < DATE 2013-05-03", true],
    ["tx.date <= DATE 2013-05-03", true],
    ["tx.date >= DATE 2013-05-03", true],
    ["tx.date >= DAT 2013-05-03", false],
    ["tx.date <= DATE2013-05-03", false],
    ["tx.date <= DATE -05-03", false],
    ["tx.date >= DATE 20130503", false],
    ["tx.date >= DATE 2013+01-03", false],
    ["tx.date >= DATE 0013-01-03", false],
    ["tx.date >= DATE 2013-31-03", false],
    ["tx.date >= DATE 2013-01-83", false],
    ["tx.date > TIME 2013-05-03T14:45:00+07:00", true],
    ["tx.date < TIME 2013-05-03T14:45:00-02:00", true],
    ["tx.date <= TIME 2013-05-03T14:45:00Z", true],
    ["tx.date >= TIME 2013-05-03T14:45:00Z", true],
    ["tx.date >= TIME2013-05-03T14:45:00Z", false],
    ["tx.date = IME 2013-05-03T14:45:00Z", false],
    ["tx.date = TIME 2013-05-:45:00Z", false],
    ["tx.date >= TIME 2013-05-03T14:45:00", false],
    ["tx.date >= TIME 0013-00-00T14:45:00Z", false],
    ["tx.date >= TIME 2013+05=03T14:45:00Z", false],
    ["account.balance=100", true],
    ["account.balance >= 200", true],
    ["account.balance >= -300", false],
    ["account.balance >>= 400", false],
    ["account.balance=33.22.1", false],
    ["slashing.amount EXISTS", true],
    ["slashing.amount EXISTS AND account.balance=100", true],
    ["account.balance=100 AND slashing.amount EXISTS", true],
    ["slashing EXISTS", true],
    ["hash='136E18F7E4C348B780CF873A0BF43922E5BAFA63'", true],
    ["hash=136E18F7E4C348B780CF873A0BF43922E5BAFA63", false],
    // TestScanner's tokens, TestScannerErrors' inputs
    ["a.b = 0.32", true],
    ["and EXISTS", true],
    ["x.y CONTAINS 'z'", true],
    ["a.b = TIME 2021-11-23T15:16:17Z", true],
    ["a.b = DATE 2021-11-23", true],
    ["a.b = 'incomplete string", false],
    ["a.b = -23", false],
    ["a.b = &", false],
    ["a.b = DATE xyz-pdq", false],
    ["a.b = DATE xyzp-dq-zv", false],
    ["a.b = DATE 0000-00-00", false],
    ["a.b = DATE 0000-00-000", false],
    ["a.b = DATE 2021-01-99", false],
    ["a.b = TIME 2021-01-01T34:56:78Z", false],
    ["a.b = TIME 2021-01-99T14:56:08Z", false],
    ["a.b = TIME 2021-01-99T34:56:08", false],
    ["a.b = TIME 2021-01-99T34:56:11+3", false],
    // Read off the scanner: years 1900-2999, whole seconds, one space after TIME/DATE, tags.
    ["a.b = DATE 1900-01-01", true],
    ["a.b = DATE 1899-12-31", false],
    ["a.b = DATE 3000-01-01", false],
    ["a.b = TIME 1899-12-31T23:59:59Z", false],
    ["a.b = TIME 2021-11-23T15:16:17.5Z", false],
    ["a.b = TIME  2021-11-23T15:16:17Z", false],
    ["a.b = 5.", true],
    ["_x EXISTS", true],
    [".x EXISTS", true],
    ["é.x EXISTS", true],
    ["TIME=5", true],
    ["TIME EXISTS", false],
    ["a.b = 5 AND", false],
    ["a.b = 'x\u0000y\ud800'", true],
  ])("%j → %s", (input, valid) => {
    expect(parseQuery(input).ok).toBe(valid);
  });
});

describe("parseQuery: errors", () => {
  // [input, offset, expected]
  it.each<[string, number, string]>([
    // empty
    ["", 0, "a condition"],
    ["  \t ", 4, "a condition"],
    // NUL is no tag character (in a string it is text like any other)
    ["a\u0000b EXISTS", 1, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    // tags
    ["5tx EXISTS", 0, "a tag"],
    ["(tx.height = 5)", 0, "a tag"],
    ["'tx.height' = 5", 0, "a tag"],
    ["EXISTS EXISTS", 0, "a tag"],
    // operators
    ["tx.height", 9, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["tx.height == 5", 10, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["tx.height != 5", 10, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["tx.height=>5", 9, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["tx.height LIKE 'x'", 10, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["a.b contains 'x'", 4, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["a.b exists", 4, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    ["tx.height 5", 10, "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)"],
    // missing operand
    ["tx.height =", 11, "a number, a quoted string, TIME or DATE"],
    ["tx.height > ", 12, "a number, TIME or DATE"],
    ["a.b CONTAINS", 12, "a quoted string"],
    ["tx.height = AND a.b EXISTS", 12, "a number, a quoted string, TIME or DATE"],
    // strings
    ["a.b = 'abc", 10, "a closing single quote"],
    ["a.b = 'it's'", 10, "'AND' or end of query"],
    ["a.b = abc", 6, "a number, a quoted string, TIME or DATE"],
    ['a.b = "abc"', 6, "a number, a quoted string, TIME or DATE"],
    ["tx.height > 'abc'", 12, "a number, TIME or DATE"],
    ["tx.height <= 'abc'", 13, "a number, TIME or DATE"],
    ["a.b CONTAINS 5", 13, "a quoted string"],
    ["a.b CONTAINS DATE 2026-01-02", 13, "a quoted string"],
    // numbers
    ["tx.height = -5", 12, "an unsigned number"],
    ["tx.height > +5", 12, "an unsigned number"],
    ["tx.height = 5e3", 13, "a digit, '.' or the end of the number"],
    ["tx.height = 1.2.3", 15, "a digit or the end of the number"],
    ["tx.height = .5", 12, "a number, a quoted string, TIME or DATE"],
    ["tx.height = 5AND a.b EXISTS", 13, "a digit, '.' or the end of the number"],
    // TIME
    ["a.t < TIME", 10, "a space"],
    ["a.t < TIME\t2026-01-02T15:04:05Z", 10, "a space"],
    ["a.t < TIME  2026-01-02T15:04:05Z", 11, "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"],
    ["TIME = 5", 0, "a tag"],
    ["DATE EXISTS", 0, "a tag"],
    ["a.t < TIME '2026-01-02T15:04:05Z'", 11, "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"],
    ["a.t < TIME2026-01-02T15:04:05Z", 10, "whitespace"],
    ["a.t < time 2026-01-02T15:04:05Z", 6, "a number, TIME or DATE"],
    ["a.t < TIME 0000-01-02T15:04:05Z", 11, "a year 1900-2999"],
    ["a.t < TIME 26-01-02T15:04:05Z", 11, "a year 1900-2999"],
    // CometBFT's own syntax tests: years outside 1900-2999 are refused.
    ["tx.date >= DATE 0013-01-03", 16, "a year 1900-2999"],
    ["tx.date >= TIME 3000-01-01T00:00:00Z", 16, "a year 1900-2999"],
    ["a.t < TIME 2026/01/02T15:04:05Z", 15, "'-'"],
    ["a.t < TIME 2026-13-02T15:04:05Z", 16, "a month 01-12"],
    ["a.t < TIME 2026-1-02T15:04:05Z", 16, "a month 01-12"],
    ["a.t < TIME 2025-02-29T15:04:05Z", 19, "a day 01-28"],
    ["a.t < TIME 2026-04-31T15:04:05Z", 19, "a day 01-30"],
    ["a.t < TIME 2026-01-02", 21, "'T'"],
    ["a.t < TIME 2026-01-02 15:04:05Z", 21, "'T'"],
    ["a.t < TIME 2026-01-02T24:00:00Z", 22, "an hour 00-23"],
    ["a.t < TIME 2026-01-02T15:60:00Z", 25, "a minute 00-59"],
    ["a.t < TIME 2026-01-02T15:04:60Z", 28, "a second 00-59"],
    ["a.t < TIME 2026-01-02T15:04:05", 30, "'Z' or a UTC offset such as +02:00"],
    ["a.t < TIME 2026-01-02T15:04:05z", 30, "'Z' or a UTC offset such as +02:00"],
    // TIME takes whole seconds (CometBFT's scanner stops at '.').
    ["a.t < TIME 2026-01-02T15:04:05.Z", 30, "'Z' or a UTC offset such as +02:00"],
    ["a.t < TIME 2026-01-02T15:04:05.5Z", 30, "'Z' or a UTC offset such as +02:00"],
    ["a.t < TIME 2026-01-02T15:04:05+0530", 33, "':'"],
    ["a.t < TIME 2026-01-02T15:04:05+5:30", 31, "an offset hour 00-23"],
    ["a.t < TIME 2026-01-02T15:04:05+24:00", 31, "an offset hour 00-23"],
    ["a.t < TIME 2026-01-02T15:04:05+05:60", 34, "an offset minute 00-59"],
    ["a.t < TIME 2026-01-02T15:04:05ZAND a.b EXISTS", 31, "the end of the timestamp"],
    // DATE
    ["a.t < DATE", 10, "a space"],
    ["a.t < DATE  2026-01-02", 11, "a date such as 2026-01-02"],
    ["a.t = DATE 2026-02-30", 19, "a day 01-28"],
    ["a.t = DATE 2026-01-02T00:00:00Z", 21, "the end of the date"],
    ["a.t = DATE 20260102", 15, "'-'"],
    // trailing garbage and AND
    ["a.b EXISTS foo", 11, "'AND' or end of query"],
    ["a.b = 'x' 'y'", 10, "'AND' or end of query"],
    ["a.b EXISTS and c.d EXISTS", 11, "'AND' or end of query"],
    ["a.b EXISTS OR c.d EXISTS", 11, "'AND' or end of query"],
    ["a.b EXISTS ANDc.d EXISTS", 11, "'AND' or end of query"],
    ["a.b EXISTS AND", 14, "a tag"],
    ["a.b EXISTS AND   ", 17, "a tag"],
    ["a.b EXISTS AND AND c.d EXISTS", 15, "a tag"],
    ["a.b EXISTS AND 1c EXISTS", 15, "a tag"],
  ])("%j → offset %i, expected %s", (input, offset, expected) => {
    const result = parseQuery(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.offset).toBe(offset);
    expect(result.error.expected).toBe(expected);
    expect(result.error.message.startsWith(`parse error at offset ${offset}: expected ${expected}`)).toBe(true);
  });

  it("writes full messages naming what follows, what was found and a hint", () => {
    const message = (input: string) => {
      const result = parseQuery(input);
      return result.ok ? "ok" : result.error.message;
    };
    expect(message("")).toBe("parse error at offset 0: expected a condition, found an empty query");
    expect(message("tx.height > ")).toBe("parse error at offset 12: expected a number, TIME or DATE after '>', found end of query");
    expect(message("tx.height > 'abc'")).toBe(
      "parse error at offset 12: expected a number, TIME or DATE after '>', found a quoted string (> compares numbers and times; use = or CONTAINS for strings)",
    );
    expect(message("tx.height == 5")).toBe(
      "parse error at offset 10: expected an operator (=, <, <=, >, >=, CONTAINS or EXISTS) after 'tx.height', found unknown operator '==' (use = for equality)",
    );
    expect(message("a.b contains 'x'")).toBe(
      "parse error at offset 4: expected an operator (=, <, <=, >, >=, CONTAINS or EXISTS) after 'a.b', found 'contains' (keywords are case-sensitive: write CONTAINS)",
    );
    expect(message("a.b = 'abc")).toBe("parse error at offset 10: expected a closing single quote, found end of query (the string opened at offset 6 is unterminated)");
    expect(message("tx.height = -5")).toBe("parse error at offset 12: expected an unsigned number after '=', found '-' (numbers cannot have a sign)");
    expect(message("tx.height = 5e3")).toBe("parse error at offset 13: expected a digit, '.' or the end of the number, found 'e' (exponents are not supported)");
    expect(message("a.t < TIME 2026-01-02T15:04:05.5Z")).toBe("parse error at offset 30: expected 'Z' or a UTC offset such as +02:00, found '.' (TIME takes whole seconds)");
    expect(message("a.b CONTAINS 5")).toBe(
      "parse error at offset 13: expected a quoted string after 'CONTAINS', found '5' (CONTAINS matches a substring given as a quoted string)",
    );
    expect(message("a.b = abc")).toBe("parse error at offset 6: expected a number, a quoted string, TIME or DATE after '=', found 'abc' (strings must be in single quotes)");
    expect(message("a.t < TIME 2026-13-02T15:04:05Z")).toBe("parse error at offset 16: expected a month 01-12, found '13'");
    expect(message("a.t < TIME 2026-01-02")).toBe("parse error at offset 21: expected 'T', found end of query (use DATE for a calendar date)");
    expect(message("a.t = DATE 2026-01-02T00:00:00Z")).toBe("parse error at offset 21: expected the end of the date, found 'T' (use TIME for a timestamp)");
    expect(message("a.b EXISTS and c.d EXISTS")).toBe("parse error at offset 11: expected 'AND' or end of query, found 'and' (keywords are case-sensitive: write AND)");
    expect(message("a.b EXISTS AND")).toBe("parse error at offset 14: expected a tag after 'AND', found end of query");
    expect(message("5tx EXISTS")).toBe("parse error at offset 0: expected a tag, found '5tx' (tags must start with a letter, '_' or '.')");
  });

  it(`rejects queries longer than ${MAX_QUERY_LENGTH} characters at offset ${MAX_QUERY_LENGTH}`, () => {
    const input = `memo.text = '${"x".repeat(MAX_QUERY_LENGTH - 13)}'`;
    expect(input).toHaveLength(MAX_QUERY_LENGTH + 1);
    expect(parseQuery(input)).toEqual({
      ok: false,
      error: {
        offset: 512,
        expected: "at most 512 characters",
        message: "parse error at offset 512: expected at most 512 characters, found 513 characters (the query is too long)",
      },
    });
  });

  it(`merges repeated conditions and refuses more than ${MAX_CONDITIONS} distinct ones at the first one too many`, () => {
    // 64 copies of one condition (PostgreSQL spent ~320 ms planning them) are one condition.
    const repeated = parseQuery(Array.from({ length: 64 }, () => "a=1").join(" AND "));
    expect(repeated.ok && repeated.query.conditions).toEqual([{ key: "a", op: "=", operand: { kind: "number", value: "1" }, offset: 0 }]);
    const same = parseQuery("t.at > TIME 2026-01-02T00:00:00Z AND t.at > TIME 2026-01-02T00:00:00Z AND t.at > TIME 2026-01-02T01:00:00+01:00 AND a EXISTS AND a EXISTS");
    expect(same.ok && same.query.conditions.map((c) => c.offset)).toEqual([0, 74, 116]);

    const distinct = (n: number) => Array.from({ length: n }, (_, i) => `k${i}.v = ${i}`).join(" AND ");
    expect(parseQuery(distinct(MAX_CONDITIONS)).ok).toBe(true);
    const over = distinct(MAX_CONDITIONS + 1);
    const offset = over.lastIndexOf(`k${MAX_CONDITIONS}.v`);
    expect(parseQuery(over)).toEqual({
      ok: false,
      error: {
        offset,
        expected: `at most ${MAX_CONDITIONS} distinct conditions`,
        message: `parse error at offset ${offset}: expected at most ${MAX_CONDITIONS} distinct conditions, found another one (narrow the search with fewer conditions, or tx.height / block.height bounds)`,
      },
    });
  });
});

describe("attribute value helpers", () => {
  it("reads the leading unsigned number of a value", () => {
    expect(leadingNumber("8stake")).toBe("8");
    expect(leadingNumber("1.5uatom")).toBe("1.5");
    expect(leadingNumber("1.x")).toBe("1");
    expect(leadingNumber("0042")).toBe("0042");
    expect(leadingNumber("-5")).toBeNull();
    expect(leadingNumber("stake8")).toBeNull();
    expect(leadingNumber("")).toBeNull();
  });

  it("reads a value as a time only when the whole value is RFC 3339", () => {
    expect(attributeTime("2026-01-02T15:04:05.5+01:00")).toBe("2026-01-02T15:04:05.5+01:00");
    // Beyond PostgreSQL's ±15:59 (Go, and so CometBFT, takes up to 23:59): the same instant in UTC, every digit kept.
    expect(attributeTime("2026-01-03T15:30:00.123456789+16:00")).toBe("2026-01-02T23:30:00.123456789Z");
    expect(attributeTime("2026-01-02T08:00:00-23:59")).toBe("2026-01-03T07:59:00Z");
    expect(attributeTime("2026-01-02T15:04:05Z ")).toBeNull();
    expect(attributeTime("2026-01-02")).toBeNull();
    expect(attributeTime("soon")).toBeNull();
  });

  it("computes UTC day bounds across month, year and leap-day ends", () => {
    expect(dayBounds("2026-01-31")).toEqual({ start: "2026-01-31T00:00:00Z", next: "2026-02-01T00:00:00Z" });
    expect(dayBounds("2024-02-28")).toEqual({ start: "2024-02-28T00:00:00Z", next: "2024-02-29T00:00:00Z" });
    expect(dayBounds("2026-12-31")).toEqual({ start: "2026-12-31T00:00:00Z", next: "2027-01-01T00:00:00Z" });
    expect(dayBounds("0050-01-01")).toEqual({ start: "0050-01-01T00:00:00Z", next: "0050-01-02T00:00:00Z" });
  });
});

/** Compiles `input` with the network already at $1, as the callers do. */
function tx(input: string): { sql: string; params: unknown[] } {
  const params: unknown[] = ["cosmoshub-4"];
  return { sql: compileTxQuery(parse(input), params), params };
}

function block(input: string): { sql: string; params: unknown[] } {
  const params: unknown[] = ["cosmoshub-4"];
  return { sql: compileBlockQuery(parse(input), params), params };
}

const TX_ATTRS = "EXISTS (SELECT 1 FROM consensus_tx_attrs a WHERE a.network = t.network AND a.height = t.height AND a.tx_index = t.tx_index";
const BLOCK_ATTRS = "EXISTS (SELECT 1 FROM consensus_block_attrs a WHERE a.network = b.network AND a.height = b.height";

describe("compileTxQuery", () => {
  it("compiles every event-key shape selective-first (= on a string, comparisons, CONTAINS, EXISTS), pushing key then value in that order", () => {
    const { sql, params } = tx(
      "transfer.sender = 'cosmos1abc' AND transfer.amount > 8 AND memo.text CONTAINS 'hi' AND message.action EXISTS AND unbond.at <= TIME 2026-01-02T15:04:05+05:30",
    );
    expect(sql).toBe(
      [
        `${TX_ATTRS} AND a.key = $2 AND a.value = $3)`,
        `${TX_ATTRS} AND a.key = $4 AND a.num > $5::numeric)`,
        `${TX_ATTRS} AND a.key = $6 AND a.time <= $7::timestamptz)`,
        `${TX_ATTRS} AND a.key = $8 AND strpos(a.value, $9) > 0)`,
        `${TX_ATTRS} AND a.key = $10)`,
      ].join(" AND "),
    );
    expect(params).toEqual([
      "cosmoshub-4",
      "transfer.sender",
      "cosmos1abc",
      "transfer.amount",
      "8",
      "unbond.at",
      "2026-01-02T15:04:05+05:30",
      "memo.text",
      "hi",
      "message.action",
    ]);
  });

  it("puts the row's own columns first and equalities before ranges, whatever the order written", () => {
    const { sql, params } = tx("a.e EXISTS AND a.c CONTAINS 'x' AND a.r > 1 AND a.n = 2 AND a.s = 'y' AND tx.hash = 'ab' AND tx.height > 3");
    // Each term names its column (t.hash, t.height) or its key (a.key = $n).
    const order = [...sql.matchAll(/a\.key = \$(\d+)|(?:^|AND )t\.(hash|height) /g)].map((m) => m[2] ?? params[Number(m[1]) - 1]);
    expect(order).toEqual(["hash", "height", "a.s", "a.n", "a.r", "a.c", "a.e"]);
  });

  it("keeps numbers exact, as written", () => {
    expect(tx("a.n >= 007.50").params).toEqual(["cosmoshub-4", "a.n", "007.50"]);
    expect(tx("a.n = 123456789012345678901234567890.000000000000000000001").params[2]).toBe("123456789012345678901234567890.000000000000000000001");
  });

  it.each<[string, string, string[]]>([
    ["a.d = DATE 2026-01-31", "a.time >= $3::timestamptz AND a.time < $4::timestamptz", ["2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z"]],
    ["a.d < DATE 2026-01-31", "a.time < $3::timestamptz", ["2026-01-31T00:00:00Z"]],
    ["a.d <= DATE 2026-01-31", "a.time < $3::timestamptz", ["2026-02-01T00:00:00Z"]],
    ["a.d > DATE 2026-01-31", "a.time >= $3::timestamptz", ["2026-02-01T00:00:00Z"]],
    ["a.d >= DATE 2026-01-31", "a.time >= $3::timestamptz", ["2026-01-31T00:00:00Z"]],
  ])("compiles %j as a UTC day range", (input, test, bounds) => {
    const { sql, params } = tx(input);
    expect(sql).toBe(`${TX_ATTRS} AND a.key = $2 AND ${test})`);
    expect(params).toEqual(["cosmoshub-4", "a.d", ...bounds]);
  });

  it.each<[string, string, unknown[]]>([
    ["tx.height = 5", "t.height = $2::bigint", ["5"]],
    ["tx.height = 5.000", "t.height = $2::bigint", ["5"]],
    ["tx.height = 007", "t.height = $2::bigint", ["7"]],
    ["tx.height = 5.5", "FALSE", []],
    ["tx.height < 5", "t.height < $2::bigint", ["5"]],
    ["tx.height < 5.5", "t.height <= $2::bigint", ["5"]],
    ["tx.height <= 5.5", "t.height <= $2::bigint", ["5"]],
    ["tx.height > 5.5", "t.height > $2::bigint", ["5"]],
    ["tx.height >= 5.5", "t.height > $2::bigint", ["5"]],
    ["tx.height >= 5", "t.height >= $2::bigint", ["5"]],
    ["tx.height > 0.1", "t.height > $2::bigint", ["0"]],
    ["tx.height < 99999999999999999999", "TRUE", []],
    ["tx.height >= 99999999999999999999", "FALSE", []],
    ["tx.height = 9223372036854775807", "t.height = $2::bigint", ["9223372036854775807"]],
    ["tx.height = '5'", "t.height = $2::bigint", ["5"]],
    ["tx.height = '05'", "FALSE", []],
    ["tx.height = 'five'", "FALSE", []],
    ["tx.height CONTAINS '12'", "strpos(t.height::text, $2) > 0", ["12"]],
    ["tx.height EXISTS", "TRUE", []],
    ["tx.height < TIME 2026-01-02T15:04:05Z", "FALSE", []],
    ["tx.height = DATE 2026-01-02", "FALSE", []],
    ["tx.hash = 'deadbeef'", "t.hash = $2", ["DEADBEEF"]],
    ["tx.hash = 0123", "t.hash = $2", ["0123"]],
    ["tx.hash CONTAINS 'beef'", "strpos(t.hash, $2) > 0", ["BEEF"]],
    ["tx.hash EXISTS", "TRUE", []],
    ["tx.hash > 5", "FALSE", []],
    ["tx.hash = TIME 2026-01-02T15:04:05Z", "FALSE", []],
  ])("maps reserved %j onto columns", (input, sql, values) => {
    expect(tx(input)).toEqual({ sql, params: ["cosmoshub-4", ...values] });
  });

  it("treats block.height as an ordinary event key", () => {
    expect(tx("block.height = 5")).toEqual({ sql: `${TX_ATTRS} AND a.key = $2 AND a.num = $3::numeric)`, params: ["cosmoshub-4", "block.height", "5"] });
  });

  it("numbers parameters after whatever the caller pushed and mixes constant terms in", () => {
    const params: unknown[] = ["net", "x", "y"];
    const sql = compileTxQuery(parse("tx.height > 5.5 AND a.b EXISTS AND tx.hash > 1 AND tx.height = 5.5 AND c.d = 'e'"), params);
    expect(sql).toBe(
      `t.height > $4::bigint AND FALSE AND FALSE AND ${TX_ATTRS} AND a.key = $5 AND a.value = $6 AND a.height > $4::bigint) AND ${TX_ATTRS} AND a.key = $7 AND a.height > $4::bigint)`,
    );
    expect(params).toEqual(["net", "x", "y", "5", "c.d", "e", "a.b"]);
  });

  it("repeats the height bounds inside every attribute test, whatever their order, reusing their parameters", () => {
    expect(tx("a.b > 10 AND tx.height >= 3 AND c.d EXISTS AND tx.height < 9.5")).toEqual({
      sql: [
        "t.height >= $2::bigint",
        "t.height <= $3::bigint",
        `${TX_ATTRS} AND a.key = $4 AND a.num > $5::numeric AND a.height >= $2::bigint AND a.height <= $3::bigint)`,
        `${TX_ATTRS} AND a.key = $6 AND a.height >= $2::bigint AND a.height <= $3::bigint)`,
      ].join(" AND "),
      params: ["cosmoshub-4", "3", "9", "a.b", "10", "c.d"],
    });
    // Only comparisons bound: CONTAINS on the height's text, constants and EXISTS are not repeated.
    expect(tx("tx.height CONTAINS '1' AND tx.height EXISTS AND tx.height < 99999999999999999999 AND a.b EXISTS").sql).toBe(`strpos(t.height::text, $2) > 0 AND TRUE AND TRUE AND ${TX_ATTRS} AND a.key = $3)`);
    expect(tx("tx.height = '7' AND a.b EXISTS").sql).toBe(`t.height = $2::bigint AND ${TX_ATTRS} AND a.key = $3 AND a.height = $2::bigint)`);
  });

  it("never puts operand or key text into the SQL", () => {
    // A string cannot contain a quote, so the classic injection is a syntax error...
    const injection = parseQuery("memo.text = ''; DROP TABLE x; --'");
    expect(injection.ok || injection.error).toMatchObject({ offset: 14, expected: "'AND' or end of query" });
    // ...and whatever a string does contain travels as a parameter.
    const hostile = ["; DROP TABLE x; --", ");DELETE FROM consensus_txs;--", "$1 OR TRUE", "\\ OR 1=1 --", '"quoted" %_'];
    for (const s of hostile) {
      for (const input of [`memo.text = '${s}'`, `memo.text CONTAINS '${s}'`, `tx.hash = '${s}'`, `tx.hash CONTAINS '${s}'`, `tx.height CONTAINS '${s}'`]) {
        const { sql, params } = tx(input);
        expect(sql).not.toContain(s);
        expect(params).toContain(input.startsWith("tx.hash") ? s.toUpperCase() : s);
      }
    }
    const { sql, params } = tx("drop--table.x EXISTS AND memo.text = '; DROP TABLE x; --'");
    expect(sql.toLowerCase()).not.toContain("drop");
    expect(params).toEqual(["cosmoshub-4", "memo.text", "; DROP TABLE x; --", "drop--table.x"]);
  });

  it("references every pushed parameter, in order of first use", () => {
    const { sql, params } = tx(
      "tx.height >= 3 AND tx.height < 9.5 AND tx.hash = 'ab' AND a.b = DATE 2026-01-02 AND a.c > DATE 2026-01-02 AND a.d = 'x' AND a.e CONTAINS 'y' AND a.f EXISTS AND a.g < 1.5 AND a.h = TIME 2026-01-02T00:00:00Z",
    );
    const refs = [...new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))];
    expect(refs).toEqual(Array.from({ length: params.length - 1 }, (_, i) => i + 2));
  });

  it("uses the ISO form of a hand-built time operand without its text", () => {
    const params: unknown[] = ["net"];
    const sql = compileTxQuery({ conditions: [{ key: "a.t", op: ">", operand: { kind: "time", value: new Date("2026-01-02T00:00:00Z") }, offset: 0 }] }, params);
    expect(sql).toBe(`${TX_ATTRS} AND a.key = $2 AND a.time > $3::timestamptz)`);
    expect(params).toEqual(["net", "a.t", "2026-01-02T00:00:00.000Z"]);
  });

  it("rejects hand-built conditions the grammar cannot produce", () => {
    const compile = (condition: Condition) => compileTxQuery({ conditions: [condition] }, ["net"]);
    expect(() => compile({ key: "a.b", op: "<", operand: { kind: "string", value: "x" }, offset: 0 })).toThrow(TypeError);
    expect(() => compile({ key: "a.b", op: "CONTAINS", operand: { kind: "number", value: "1" }, offset: 0 })).toThrow(TypeError);
    expect(() => compile({ key: "a.b", op: "=", offset: 0 })).toThrow(TypeError);
    expect(compileTxQuery({ conditions: [] }, [])).toBe("TRUE");
  });
});

describe("compileTxCount", () => {
  const count = (input: string) => {
    const params: unknown[] = ["cosmoshub-4"];
    return { sql: compileTxCount(parse(input), params), params };
  };
  const KEY = "FROM consensus_attr_keys k WHERE k.network = $1 AND k.key = $2";
  const SUM = "SELECT coalesce(sum(v.txs), 0)::bigint FROM consensus_attr_values v WHERE v.network = $1 AND v.key = $2";

  it("reads a key's count for EXISTS and one value's count for = on a string", () => {
    expect(count("a.b EXISTS")).toEqual({ sql: `SELECT coalesce((SELECT k.txs ${KEY}), 0)::bigint AS n`, params: ["cosmoshub-4", "a.b"] });
    expect(count("a.b = 'x'")).toEqual({ sql: `SELECT (${SUM} AND v.value = $3) AS n`, params: ["cosmoshub-4", "a.b", "x"] });
  });

  it("sums the matching values for the other tests, only while no tx holds two values of the key", () => {
    const guarded = (match: string) => `SELECT CASE WHEN coalesce((SELECT k.multi_txs ${KEY}), 0) = 0 THEN (${SUM}${match}) END AS n`;
    expect(count("a.b CONTAINS 'x'")).toEqual({ sql: guarded(" AND strpos(v.value, $3) > 0"), params: ["cosmoshub-4", "a.b", "x"] });
    expect(count("a.b > 1.5").sql).toBe(guarded(" AND v.num > $3::numeric"));
    expect(count("a.b = 7").sql).toBe(guarded(" AND v.num = $3::numeric"));
    expect(count("a.b <= TIME 2026-01-02T00:00:00Z").sql).toBe(guarded(" AND v.time <= $3::timestamptz"));
    expect(count("a.b = DATE 2026-01-02")).toEqual({
      sql: guarded(" AND v.time >= $3::timestamptz AND v.time < $4::timestamptz"),
      params: ["cosmoshub-4", "a.b", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"],
    });
  });

  it("leaves reserved keys and several conditions to counting", () => {
    for (const input of ["tx.height = 5", "tx.hash = 'AB'", "a.b EXISTS AND c.d EXISTS", "a.b = 'x' AND tx.height > 1"]) {
      expect(count(input), input).toEqual({ sql: null, params: ["cosmoshub-4"] });
    }
  });
});

describe("compileBlockQuery", () => {
  it("maps block.height onto b.height and everything else onto block attributes", () => {
    expect(block("block.height >= 100 AND block.height < 200.5 AND tx.height = 5 AND begin_block.proposer EXISTS AND mint.at > TIME 2026-01-02T00:00:00Z")).toEqual({
      sql: [
        "b.height >= $2::bigint",
        "b.height <= $3::bigint",
        `${BLOCK_ATTRS} AND a.key = $4 AND a.num = $5::numeric AND a.height >= $2::bigint AND a.height <= $3::bigint)`,
        `${BLOCK_ATTRS} AND a.key = $6 AND a.time > $7::timestamptz AND a.height >= $2::bigint AND a.height <= $3::bigint)`,
        `${BLOCK_ATTRS} AND a.key = $8 AND a.height >= $2::bigint AND a.height <= $3::bigint)`,
      ].join(" AND "),
      params: ["cosmoshub-4", "100", "200", "tx.height", "5", "mint.at", "2026-01-02T00:00:00Z", "begin_block.proposer"],
    });
  });

  it("treats tx.hash as an event key", () => {
    expect(block("tx.hash = 'ab'")).toEqual({ sql: `${BLOCK_ATTRS} AND a.key = $2 AND a.value = $3)`, params: ["cosmoshub-4", "tx.hash", "ab"] });
  });
});

describe("browser safety", () => {
  it("imports nothing but sibling modules outside tests", () => {
    const dir = import.meta.dirname;
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
      const source = readFileSync(path.join(dir, file), "utf8");
      for (const [, from] of source.matchAll(/from\s+"([^"]+)"/g)) expect(from, `${file} imports ${from}`).toMatch(/^\.\/[a-z]+$/);
    }
  });
});
