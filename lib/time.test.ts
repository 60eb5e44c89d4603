import { describe, expect, it } from "vitest";
import { parseTime } from "./time";

describe("parseTime", () => {
  it("reads times as ISO 8601 with a zone, dates as UTC, or unix milliseconds", () => {
    expect(parseTime("2026-01-02T15:04:05Z")?.toISOString()).toBe("2026-01-02T15:04:05.000Z");
    expect(parseTime("2026-01-02T15:04:05.250+02:00")?.toISOString()).toBe("2026-01-02T13:04:05.250Z");
    expect(parseTime("2026-01-02")?.toISOString()).toBe("2026-01-02T00:00:00.000Z");
    expect(parseTime("1767366245000")?.toISOString()).toBe("2026-01-02T15:04:05.000Z");
    for (const bad of ["2026-01-02T15:04:05", "2026-13-02", "yesterday", "-5", "", "Nov 26 2026"]) expect(parseTime(bad), bad).toBeNull();
  });

  it("takes times from 1970 to 9999 only (PostgreSQL refuses some earlier ones)", () => {
    expect(parseTime("1970-01-01T00:00:00Z")?.getTime()).toBe(0);
    expect(parseTime("0")?.getTime()).toBe(0);
    expect(parseTime("9999-12-31T23:59:59.999Z")?.toISOString()).toBe("9999-12-31T23:59:59.999Z");
    for (const bad of ["1969-12-31T23:59:59Z", "0000-01-01", "-000100-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "10000-01-01", "253402300800000", "999999999999999"]) expect(parseTime(bad), bad).toBeNull();
  });
});
