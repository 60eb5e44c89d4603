const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * "22 Nov 2025, 14:05 UTC": formatted by hand in UTC so the server and every browser produce
 * the same text (no hydration mismatch from locale or time zone).
 */
export function formatDateTime(value: string | Date | null | undefined): string {
  if (!value) return "—";
  const d = typeof value === "string" ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return "—";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()] ?? ""} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** 1000000 → "1,000,000", independent of locale. */
export function formatNumber(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** "22 Nov 2026" (UTC). */
export function formatDate(value: string | Date): string {
  return formatDateTime(value).split(",")[0] ?? "—";
}

/** "14:05 UTC". */
export function formatTime(value: string | Date): string {
  return formatDateTime(value).split(", ")[1] ?? "";
}
