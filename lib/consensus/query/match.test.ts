import { describe, expect, it } from "vitest";
import { compareDecimal, matchesEvents } from "./match";
import { parseQuery, type Query } from "./parse";

function parse(input: string): Query {
  const result = parseQuery(input);
  if (!result.ok) throw new Error(`unexpected ${result.error.message}`);
  return result.query;
}

const TX = {
  "tm.event": ["Tx"],
  "tx.hash": ["AB12CD"],
  "tx.height": ["42"],
  "message.action": ["send"],
  "transfer.sender": ["bbn1alice", "bbn1bob"],
  "transfer.amount": ["1500ubbn", "7.25ubbn"],
  "unbond.completion_time": ["2026-01-02T15:04:05.123456789Z"],
  "memo.text": ["not a number"],
};

describe("matchesEvents: a subscription query against an event's composite keys", () => {
  it.each<[string, boolean]>([
    ["tm.event='Tx'", true],
    ["tm.event='NewBlock'", false],
    ["tm.event='tx'", false],
    ["tm.event='Tx' AND transfer.sender='bbn1bob'", true],
    ["tm.event='Tx' AND transfer.sender='bbn1carol'", false],
    ["transfer.sender CONTAINS 'ali'", true],
    ["transfer.sender CONTAINS 'ALI'", false],
    ["transfer.sender EXISTS", true],
    ["delegate.amount EXISTS", false],
    ["transfer.amount > 1000", true],
    ["transfer.amount = 7.250", true],
    ["transfer.amount < 7", false],
    ["transfer.amount >= 1500", true],
    ["tx.height = 42", true],
    ["tx.height = '42'", true],
    ["tx.height > 42", false],
    ["tx.height <= 42.5", true],
    ["memo.text > 0", false],
    ["unbond.completion_time = TIME 2026-01-02T15:04:05.123456789Z", true],
    ["unbond.completion_time > TIME 2026-01-02T15:04:05.123456788Z", true],
    ["unbond.completion_time < TIME 2026-01-02T16:04:05+01:00", false],
    ["unbond.completion_time = DATE 2026-01-02", true],
    ["unbond.completion_time < DATE 2026-01-02", false],
    ["unbond.completion_time <= DATE 2026-01-02", true],
    ["unbond.completion_time > DATE 2026-01-01", true],
    ["unbond.completion_time >= DATE 2026-01-03", false],
    ["message.action = 'send' AND transfer.amount > 5000", false],
  ])("%s → %s", (query, expected) => {
    expect(matchesEvents(parse(query), TX)).toBe(expected);
  });
});

describe("compareDecimal", () => {
  it.each<[string, string, number]>([
    ["7", "7.0", 0],
    ["007.50", "7.5", 0],
    ["10", "9.99", 1],
    ["0.1", "0.10000001", -1],
    ["123456789012345678901234567890", "123456789012345678901234567891", -1],
  ])("%s vs %s", (a, b, order) => {
    expect(compareDecimal(a, b)).toBe(order);
    expect(compareDecimal(b, a)).toBe(-order || 0);
  });
});
