/** Times given to the APIs (query parameters): one parser, one description of what it accepts. */

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;
/** The last millisecond of year 9999: later times are refused, as are times before 1970. */
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** What parseTime accepts, for error messages. */
export const TIME_FORMS = "an ISO 8601 time with a time zone (2026-01-02T15:04:05Z), a date (2026-01-02, UTC), or unix milliseconds, from 1970 to 9999";

/** ISO 8601 (with a time zone when a time is given) or unix milliseconds, from 1970 to 9999; null otherwise. */
export function parseTime(text: string): Date | null {
  let ms: number;
  if (/^\d{1,15}$/.test(text)) ms = Number(text);
  else if (ISO_TIME.test(text)) ms = Date.parse(text);
  else return null;
  return Number.isNaN(ms) || ms < 0 || ms > LATEST ? null : new Date(ms);
}
