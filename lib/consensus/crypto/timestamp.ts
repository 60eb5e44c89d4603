import { ProtoWriter } from "./proto";

/**
 * RFC 3339 timestamps with nanosecond precision, as `google.protobuf.Timestamp` values.
 * JavaScript's Date only keeps milliseconds and maps years 0–99 to 19xx, so this does the
 * calendar arithmetic itself (proleptic Gregorian, UTC, no leap seconds — like Go's time).
 */

export interface Timestamp {
  /** Seconds since 1970-01-01T00:00:00Z (negative before). */
  seconds: bigint;
  /** 0 ≤ nanos < 1e9. */
  nanos: number;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/**
 * Parses "YYYY-MM-DDTHH:MM:SS[.fffffffff](Z|±HH:MM)" (years 0001–9999, the range
 * `google.protobuf.Timestamp` allows). Throws a TypeError on anything else.
 */
export function parseTimestamp(text: string): Timestamp {
  const m = RFC3339_RE.exec(text);
  if (!m) throw new TypeError(`invalid RFC 3339 timestamp: ${JSON.stringify(text)}`);
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const fraction = m[7] ?? "";
  const zone = m[8] ?? "Z";
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new TypeError(`invalid RFC 3339 timestamp: ${JSON.stringify(text)}`);
  }
  let offset = 0;
  if (zone !== "Z") {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) throw new TypeError(`invalid RFC 3339 offset: ${JSON.stringify(text)}`);
    offset = (zone.startsWith("-") ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return { seconds: BigInt(seconds), nanos: Number(fraction.padEnd(9, "0")) };
}

/**
 * Formats like Go's `time.RFC3339Nano` in UTC (CometBFT's JSON): fractional seconds with
 * trailing zeros removed, none at all when nanos is 0, e.g. "2023-06-14T10:17:42.16447843Z".
 */
export function formatTimestamp(ts: Timestamp): string {
  if (!Number.isInteger(ts.nanos) || ts.nanos < 0 || ts.nanos >= 1e9) throw new RangeError(`nanos out of range: ${ts.nanos}`);
  const total = Number(ts.seconds);
  const days = Math.floor(total / 86400);
  const secOfDay = total - days * 86400;
  const { year, month, day } = civilFromDays(days);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const time = `${pad(Math.floor(secOfDay / 3600))}:${pad(Math.floor((secOfDay % 3600) / 60))}:${pad(secOfDay % 60)}`;
  const fraction = ts.nanos === 0 ? "" : `.${pad(ts.nanos, 9).replace(/0+$/, "")}`;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${time}${fraction}Z`;
}

/** A JS Date (millisecond precision) as an RFC 3339 string in CometBFT's format. */
export function timestampFromDate(date: Date): string {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("invalid Date");
  const seconds = Math.floor(ms / 1000);
  return formatTimestamp({ seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 });
}

/** `google.protobuf.Timestamp { int64 seconds = 1; int32 nanos = 2; }` (gogoproto StdTimeMarshal). */
export function encodeTimestamp(ts: Timestamp): Uint8Array {
  return new ProtoWriter().int64(1, ts.seconds).int64(2, BigInt(ts.nanos)).finish();
}
