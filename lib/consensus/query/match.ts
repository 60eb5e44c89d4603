/**
 * Matches a parsed query (parse.ts) against one event's attributes in memory, for subscriptions:
 * `events` maps composite keys (`transfer.sender`, `tm.event`, `tx.hash`, …) to every value
 * published under them, as CometBFT's event bus does. Per condition, with the semantics of the
 * searches (sql.ts): the condition holds when ANY value of its key matches; `=` on a string and
 * CONTAINS compare the text exactly (case-sensitive); number comparisons use the value's leading
 * number (`8stake` is 8; a value without one never matches); TIME compares the value read as an
 * RFC 3339 time, DATE a value that is a date alone (`2017-01-01`); EXISTS holds when the key has
 * a value.
 *
 * Two cases follow CometBFT's pubsub matcher (libs/pubsub/query/query.go, v0.38), which differs
 * from its kv indexer there, so tx_search/block_search (sql.ts) answer them otherwise:
 * - a tag that names an event type (`slash`, for composite keys `slash.*`) holds for that event
 *   with the empty string: `slash EXISTS` and `slash = ''` match (condition.matchesEvent); the
 *   indexer looks up the key `slash` itself, which no attribute has;
 * - DATE reads a value with syntax.ParseDate (layout 2006-01-02), so only date-only values match,
 *   by every operator; a full timestamp never matches a DATE. The indexer matches `= DATE d` by
 *   the value's text (the same values) and finds nothing for a DATE range.
 * https://github.com/cometbft/cometbft/blob/v0.38.x/libs/pubsub/query/query.go
 * https://github.com/cometbft/cometbft/blob/v0.38.x/state/txindex/kv/kv.go
 */
import { attributeTime, dayBounds, leadingNumber, scanDate } from "./literals";
import type { Condition, Query } from "./parse";

/** Compares two unsigned decimals written as text (`007.50` and `7.5` are equal). */
export function compareDecimal(a: string, b: string): number {
  const split = (s: string) => {
    const [int = "", frac = ""] = s.split(".");
    return [int.replace(/^0+/, ""), frac.replace(/0+$/, "")] as const;
  };
  const [ai, af] = split(a);
  const [bi, bf] = split(b);
  if (ai.length !== bi.length) return ai.length < bi.length ? -1 : 1;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const len = Math.max(af.length, bf.length);
  const pa = af.padEnd(len, "0");
  const pb = bf.padEnd(len, "0");
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

/** An RFC 3339 time as [epoch milliseconds, nanoseconds below the millisecond], for exact ordering. */
function instant(text: string): [number, number] {
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? "";
  return [Date.parse(text), Number(fraction.slice(3, 9).padEnd(6, "0"))];
}

function compareInstant(a: string, b: string): number {
  const [am, an] = instant(a);
  const [bm, bn] = instant(b);
  return am !== bm ? Math.sign(am - bm) : Math.sign(an - bn);
}

function holds(op: Condition["op"], order: number): boolean {
  switch (op) {
    case "=":
      return order === 0;
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
    default:
      return false;
  }
}

function valueMatches(c: Condition, value: string): boolean {
  const operand = c.operand!;
  switch (operand.kind) {
    case "string":
      return c.op === "CONTAINS" ? value.includes(operand.value) : c.op === "=" && value === operand.value;
    case "number": {
      const num = leadingNumber(value);
      return num !== null && holds(c.op, compareDecimal(num, operand.value));
    }
    case "time": {
      const time = attributeTime(value);
      return time !== null && holds(c.op, compareInstant(time, operand.text ?? operand.value.toISOString()));
    }
    case "date": {
      // Only a value that is a date alone (syntax.ParseDate), compared with the date.
      const date = scanDate(value, 0);
      if (!date.ok || date.end !== value.length) return false;
      const time = `${value}T00:00:00Z`;
      const { start } = dayBounds(operand.value);
      return holds(c.op, compareInstant(time, start));
    }
  }
}

/** Whether every condition of the query holds for an event with these attributes. */
export function matchesEvents(query: Query, events: Readonly<Record<string, readonly string[]>>): boolean {
  for (const c of query.conditions) {
    const values = Object.hasOwn(events, c.key) ? [...events[c.key]!] : [];
    // A tag that names an event type (a composite key without its last part) also holds for that
    // event with the empty string, so `slash EXISTS` finds events of type slash.
    if (Object.keys(events).some((k) => k.lastIndexOf(".") >= 0 && k.slice(0, k.lastIndexOf(".")) === c.key && events[k]!.length > 0)) values.push("");
    if (values.length === 0) return false;
    if (c.op === "EXISTS") continue;
    if (!values.some((v) => valueMatches(c, v))) return false;
  }
  return true;
}
