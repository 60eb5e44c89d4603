import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, nonce, strictTransportSecurity } from "./security-headers";

describe("console page security headers", () => {
  it("allow scripts and styles only with the response's nonce in production", () => {
    const policy = contentSecurityPolicy({ nonce: "abc123==", dev: false, https: false });
    expect(policy.split("; ")).toEqual([
      "default-src 'self'",
      "script-src 'self' 'nonce-abc123==' 'strict-dynamic'",
      "style-src 'self' 'nonce-abc123=='",
      "img-src 'self' blob: data:",
      "font-src 'self'",
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ]);
    expect(policy).not.toContain("unsafe");
  });

  it("upgrade insecure requests only over https, and allow eval and inline styles only under next dev", () => {
    expect(contentSecurityPolicy({ nonce: "n", dev: false, https: true })).toMatch(/; upgrade-insecure-requests$/);
    const dev = contentSecurityPolicy({ nonce: "n", dev: true, https: false });
    expect(dev).toContain("script-src 'self' 'nonce-n' 'strict-dynamic' 'unsafe-eval'");
    expect(dev).toContain("style-src 'self' 'unsafe-inline'");
  });

  it("use a fresh 128-bit nonce each time", () => {
    const a = nonce();
    expect(Buffer.from(a, "base64")).toHaveLength(16);
    expect(nonce()).not.toBe(a);
  });

  it("send HSTS only in production over https", () => {
    expect(strictTransportSecurity({ production: true, https: true })).toBe("max-age=31536000");
    expect(strictTransportSecurity({ production: true, https: false })).toBeNull();
    expect(strictTransportSecurity({ production: false, https: true })).toBeNull();
  });
});
