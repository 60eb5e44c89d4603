/**
 * Literal scanners shared by the query parser and by whoever fills the
 * attribute index (`consensus_tx_attrs.num` / `.time`), so that "the leading
 * number of a value" and "a value that is an RFC 3339 time" mean the same thing
 * on both sides of a comparison.
 *
 * Pure TypeScript with no Node-only APIs: the browser query playground uses it.
 */

/** A scanner failure: where it happened, what was expected there, and what was found. */
export interface LiteralFailure {
  ok: false;
  offset: number;
  expected: string;
  found: string;
  hint?: string;
}

export type LiteralScan<T> = ({ ok: true; end: number } & T) | LiteralFailure;

export const isDigit = (c: string | undefined): c is string => c !== undefined && c >= "0" && c <= "9";
export const isSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";

/** How a single character at `offset` reads in an error message ("end of query", "whitespace", "'x'"). */
export function describeChar(src: string, offset: number): string {
  const code = src.codePointAt(offset);
  if (code === undefined) return "end of query";
  const c = String.fromCodePoint(code);
  if (isSpace(c)) return "whitespace";
  if (c === "'") return "a single quote";
  return `'${c}'`;
}

class Stop {
  constructor(readonly failure: LiteralFailure) {}
}

/** A cursor over `src` whose `fail` unwinds to the enclosing scan function. */
class Cursor {
  constructor(
    readonly src: string,
    public pos: number,
  ) {}

  fail(offset: number, expected: string, found: string, hint?: string): never {
    throw new Stop({ ok: false, offset, expected, found, ...(hint ? { hint } : {}) });
  }

  char(expected: string, hint?: string): void {
    if (this.src[this.pos] !== expected) this.fail(this.pos, `'${expected}'`, describeChar(this.src, this.pos), hint);
    this.pos++;
  }

  /**
   * Exactly `width` digits forming a number in [min, max]. Both a malformed and
   * an out-of-range field are reported at the field's start with the same
   * `expected`, e.g. "a month 01-12".
   */
  field(width: number, min: number, max: number, expected: string): number {
    const start = this.pos;
    const text = this.src.slice(start, start + width);
    let ok = text.length === width;
    for (const c of text) ok &&= isDigit(c);
    if (!ok) {
      const visible = text.split(/[ \t\r\n]/)[0] ?? "";
      this.fail(start, expected, visible === "" ? describeChar(this.src, start) : `'${visible}'`);
    }
    const value = Number(text);
    if (value < min || value > max) this.fail(start, expected, `'${text}'`);
    this.pos += width;
    return value;
  }
}

function run<T>(src: string, pos: number, body: (c: Cursor) => T): LiteralScan<T> {
  const cursor = new Cursor(src, pos);
  try {
    const value = body(cursor);
    return { ok: true, end: cursor.pos, ...value };
  } catch (e) {
    if (e instanceof Stop) return e.failure;
    throw e;
  }
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

/** Years of a query's TIME and DATE literals: CometBFT's scanner refuses any outside 1900-2999. */
export const QUERY_YEARS = { min: 1900, max: 2999 };
/** Years of an attribute value read as a time (PostgreSQL has no year zero). */
const VALUE_YEARS = { min: 1, max: 9999 };

function calendarDate(c: Cursor, years = QUERY_YEARS): CalendarDate {
  const year = c.field(4, years.min, years.max, `a year ${String(years.min).padStart(4, "0")}-${years.max}`);
  c.char("-");
  const month = c.field(2, 1, 12, "a month 01-12");
  c.char("-");
  const last = daysInMonth(year, month);
  const day = c.field(2, 1, last, `a day 01-${last}`);
  return { year, month, day };
}

/** Milliseconds since the epoch of a UTC wall-clock time; Date.UTC would read years 0-99 as 1900-1999. */
function utcMillis(d: CalendarDate, hour = 0, minute = 0, second = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(d.year, d.month - 1, d.day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

/** `YYYY-MM-DD` starting at `pos` (the caller decides what may follow it). */
export function scanDate(src: string, pos: number): LiteralScan<{ value: string; year: number; month: number; day: number }> {
  return run(src, pos, (c) => {
    const d = calendarDate(c);
    return { ...d, value: src.slice(pos, c.pos) };
  });
}

/**
 * An RFC 3339 timestamp starting at `pos`: `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`,
 * upper-case `T` and `Z` as Go's time.RFC3339 layout wants them. Leap seconds
 * (second 60) are rejected, as Go does. `value` keeps millisecond precision
 * (a JS Date); `text` is the literal exactly as written, which PostgreSQL reads
 * with microsecond precision.
 */
export function scanTimestamp(src: string, pos: number, years = QUERY_YEARS, opts: { fraction?: boolean } = {}): LiteralScan<{ value: Date; text: string }> {
  return run(src, pos, (c) => {
    const d = calendarDate(c, years);
    const dateOnly = c.pos >= src.length || isSpace(src[c.pos]);
    c.char("T", dateOnly ? "use DATE for a calendar date" : undefined);
    const hour = c.field(2, 0, 23, "an hour 00-23");
    c.char(":");
    const minute = c.field(2, 0, 59, "a minute 00-59");
    c.char(":");
    const second = c.field(2, 0, 59, "a second 00-59");
    let ms = 0;
    let fraction = "";
    // A query's TIME is whole seconds: CometBFT's scanner reads only digits, '-', 'T', ':', '+' and 'Z'.
    if (src[c.pos] === "." && opts.fraction === false) c.fail(c.pos, "'Z' or a UTC offset such as +02:00", "'.'", "TIME takes whole seconds");
    if (src[c.pos] === ".") {
      c.pos++;
      const start = c.pos;
      while (isDigit(src[c.pos])) c.pos++;
      if (c.pos === start) c.fail(c.pos, "a digit after '.'", describeChar(src, c.pos));
      fraction = src.slice(start, c.pos);
      ms = Number(fraction.slice(0, 3).padEnd(3, "0"));
    }
    let offsetMinutes = 0;
    const zone = src[c.pos];
    if (zone === "Z") {
      c.pos++;
    } else if (zone === "+" || zone === "-") {
      c.pos++;
      const hours = c.field(2, 0, 23, "an offset hour 00-23");
      c.char(":");
      const minutes = c.field(2, 0, 59, "an offset minute 00-59");
      offsetMinutes = (zone === "+" ? 1 : -1) * (hours * 60 + minutes);
    } else {
      c.fail(c.pos, "'Z' or a UTC offset such as +02:00", describeChar(src, c.pos));
    }
    const value = new Date(utcMillis(d, hour, minute, second, ms) - offsetMinutes * 60_000);
    // PostgreSQL takes UTC offsets up to ±15:59 only (Go's time package, and so CometBFT, takes
    // up to 23:59): such an instant is written in UTC, keeping every fractional digit.
    const text = Math.abs(offsetMinutes) < 16 * 60 ? src.slice(pos, c.pos) : `${utcText(value)}${fraction ? `.${fraction}` : ""}Z`;
    return { value, text };
  });
}

/** `YYYY-MM-DDTHH:MM:SS` of an instant in UTC, without fraction or zone. */
function utcText(t: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${String(t.getUTCFullYear()).padStart(4, "0")}-${two(t.getUTCMonth() + 1)}-${two(t.getUTCDate())}T${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}`;
}

/** The UTC instants at which `date` (YYYY-MM-DD, already validated) starts and the next day starts, as RFC 3339. */
export function dayBounds(date: string): { start: string; next: string } {
  const [y = 0, m = 0, d = 0] = date.split("-").map(Number);
  const next = new Date(utcMillis({ year: y, month: m, day: d }) + 86_400_000);
  const format = (year: number, month: number, day: number) => `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T00:00:00Z`;
  return { start: format(y, m, d), next: format(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate()) };
}

const LEADING_NUMBER = /^[0-9]+(?:\.[0-9]+)?/;

/**
 * The leading unsigned decimal number of an attribute value, as text (exact;
 * PostgreSQL `numeric` reads it without rounding), or null when the value does
 * not start with a digit. This is what `num` must hold for numeric comparisons
 * to behave as the query language says: `8stake` → "8", `1.5uatom` → "1.5",
 * `1.x` → "1", `-5` / `abc` / "" → null (numbers in queries are unsigned too).
 */
export function leadingNumber(value: string): string | null {
  return LEADING_NUMBER.exec(value)?.[0] ?? null;
}

const TIMESTAMP_START = /^\d{4}-\d\d-\d\dT/;

/**
 * The instant an attribute value denotes when the whole value is an RFC 3339
 * timestamp (same grammar as a query's TIME literal), else null. This is what
 * `time` must hold for TIME and DATE comparisons, as the text to store in the
 * timestamptz column: the value itself (keeping sub-millisecond digits), or
 * the same instant in UTC when its offset is beyond PostgreSQL's ±15:59.
 */
export function attributeTime(value: string): string | null {
  // Most values (addresses, amounts, actions) fail at once here, without the scanner's error.
  if (!TIMESTAMP_START.test(value)) return null;
  const scan = scanTimestamp(value, 0, VALUE_YEARS);
  return scan.ok && scan.end === value.length ? scan.text : null;
}
