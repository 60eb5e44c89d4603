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
    // The value keeps its nanoseconds; a query's TIME is whole seconds.
    ["unbond.completion_time = TIME 2026-01-02T15:04:05Z", false],
    ["unbond.completion_time > TIME 2026-01-02T15:04:05Z", true],
    ["unbond.completion_time < TIME 2026-01-02T15:04:06Z", true],
    ["unbond.completion_time < TIME 2026-01-02T16:04:05+01:00", false],
    // DATE reads the value as a date alone (CometBFT's syntax.ParseDate): a full time never matches.
    ["unbond.completion_time = DATE 2026-01-02", false],
    ["unbond.completion_time <= DATE 2026-01-02", false],
    ["unbond.completion_time > DATE 2026-01-01", false],
    ["message.action = 'send' AND transfer.amount > 5000", false],
  ])("%s → %s", (query, expected) => {
    expect(matchesEvents(parse(query), TX)).toBe(expected);
  });
});

/** CometBFT's TestCompiledMatches and TestBigNumbers (internal/pubsub/query/query_test.go). */
describe("matchesEvents: CometBFT's matching tests", () => {
  it.each<[string, Record<string, string[]>, boolean]>([
    ["tm.events.type='NewBlock'", { "tm.events.type": ["NewBlock"] }, true],
    ["tx.gas > 7", { "tx.gas": ["8"] }, true],
    ["transfer.amount > 7", { "transfer.amount": ["8stake"] }, true],
    ["transfer.amount > 7", { "transfer.amount": ["8.045"] }, true],
    ["transfer.amount > 7.043", { "transfer.amount": ["8.045stake"] }, true],
    ["transfer.amount > 8.045", { "transfer.amount": ["8.045stake"] }, false],
    ["tx.gas > 7 AND tx.gas < 9", { "tx.gas": ["8"] }, true],
    ["body.weight >= 3.5", { "body.weight": ["3.5"] }, true],
    ["account.balance < 1000.0", { "account.balance": ["900"] }, true],
    ["apples.kg <= 4", { "apples.kg": ["4.0"] }, true],
    ["oranges.kg < 4 AND watermellons.kg > 10", { "oranges.kg": ["3"], "watermellons.kg": ["12"] }, true],
    ["peaches.kg < 4", { "peaches.kg": ["5"] }, false],
    ["tx.date = DATE 2017-01-01", { "tx.date": ["2017-01-01"] }, true],
    ["tx.date = DATE 2018-01-01", { "tx.date": ["2017-01-01"] }, false],
    ["tx.time = TIME 2013-05-03T14:45:00Z", { "tx.time": ["2018-05-03T14:45:00Z"] }, false],
    ["tx.time >= TIME 2013-05-03T14:45:00Z", { "tx.time": ["2018-05-03T14:45:00Z"] }, true],
    ["abci.owner.name CONTAINS 'Igor'", { "abci.owner.name": ["Igor", "Ivan"] }, true],
    ["abci.owner.name CONTAINS 'Igor'", { "abci.owner.name": ["Pavel", "Ivan"] }, false],
    ["abci.owner.name = 'Ivan' AND abci.owner.name = 'Igor'", { "abci.owner.name": ["Igor", "Ivan"] }, true],
    ["abci.owner.name = 'Ivan' AND abci.owner.name = 'John'", { "abci.owner.name": ["Igor", "Ivan"] }, false],
    ["slash EXISTS", { "slash.reason": ["missing_signature"], "slash.power": ["6000"] }, true],
    ["slash.reason EXISTS AND slash.power > 1000", { "slash.reason": ["missing_signature"], "slash.power": ["500"] }, false],
    ["big.value >= 99999999999999999999", { "big.value": ["99999999999999999999"] }, true],
    ["big.value > 99999999999999999998", { "big.value": ["99999999999999999999"] }, true],
    ["big2.value <= 18446744073709551615", { "big2.value": ["18446744073709551615"] }, true],
    ["big.floatvalue > 99999999999999999998.10", { "big.floatvalue": ["99999999999999999999.10"] }, true],
    ["big2.floatvalue <= 18446744073709551615.6", { "big2.floatvalue": ["18446744073709551615.6"] }, true],
    ["big2.floatvalue >= 12.5", { "big2.floatvalue": ["18446744073709551615.6"] }, true],
  ])("%s on %j → %s", (query, events, expected) => {
    expect(matchesEvents(parse(query), events)).toBe(expected);
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

describe("matchesEvents: DATE on date-only values, and tags naming an event type (CometBFT's pubsub matcher)", () => {
  const EV = { "tm.event": ["Tx"], "slash.reason": ["double_sign"], "slash.power": ["10"], "epoch.day": ["2017-01-01", "2017-03-05T10:00:00Z"], "a.b": ["x"], "a.b.c": ["y"] };
  it.each<[string, boolean]>([
    ["epoch.day = DATE 2017-01-01", true],
    ["epoch.day = DATE 2017-03-05", false],
    ["epoch.day < DATE 2017-01-02", true],
    ["epoch.day < DATE 2017-01-01", false],
    ["epoch.day <= DATE 2017-01-01", true],
    ["epoch.day > DATE 2016-12-31", true],
    ["epoch.day > DATE 2017-01-01", false],
    ["epoch.day >= DATE 2017-01-01", true],
    ["epoch.day > TIME 2017-03-01T00:00:00Z", true],
    ["epoch.day < TIME 2017-01-02T00:00:00Z", false],
    ["slash EXISTS", true],
    ["slash = ''", true],
    ["slash CONTAINS ''", true],
    ["slash = 'double_sign'", false],
    ["slash > 0", false],
    ["slash.reason EXISTS", true],
    ["slas EXISTS", false],
    ["tm EXISTS", true],
    ["tx EXISTS", false],
    // a.b is both a composite key (value x) and the type of a.b.c
    ["a.b = 'x'", true],
    ["a.b = ''", true],
    ["a EXISTS", true],
    ["a.b.c = 'y'", true],
  ])("%s → %s", (query, expected) => {
    expect(matchesEvents(parse(query), EV)).toBe(expected);
  });
});
