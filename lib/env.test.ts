import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "./env";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "blockgate-env-"));

describe("configuration", () => {
  it("applies defaults and generates local secrets once, kept across restarts", () => {
    const dir = tmp();
    const a = parseEnv({ DATA_DIR: dir });
    expect(a).toMatchObject({ PORT: 3000, HOST: "127.0.0.1", PUBLIC_URL: "http://localhost:3000", ROLE: "all", productionMode: false });
    expect(a.APP_SECRET.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, "secrets.json");
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const b = parseEnv({ DATA_DIR: dir });
    expect(b.APP_SECRET).toBe(a.APP_SECRET);
    expect(b.NEXTAUTH_SECRET).toBe(a.NEXTAUTH_SECRET);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ APP_SECRET: a.APP_SECRET, NEXTAUTH_SECRET: a.NEXTAUTH_SECRET });
  });

  it("names every bad variable", () => {
    const bad = () => parseEnv({ DATA_DIR: tmp(), PORT: "70000", DATABASE_URL: "mysql://x", ROLE: "boss", APP_SECRET: "short" });
    expect(bad).toThrow(ConfigError);
    try {
      bad();
    } catch (e) {
      const msg = (e as Error).message;
      for (const name of ["PORT", "DATABASE_URL", "ROLE", "APP_SECRET"]) expect(msg).toContain(name);
    }
  });

  it("refuses production with an external database but without explicit secrets", () => {
    expect(() => parseEnv({ NODE_ENV: "production", DATABASE_URL: "postgres://db/x", DATA_DIR: tmp() })).toThrow(/APP_SECRET, NEXTAUTH_SECRET: required in production/);
    const ok = parseEnv({ NODE_ENV: "production", DATABASE_URL: "postgres://db/x", APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32), PUBLIC_URL: "https://nodes.example.com/" });
    expect(ok.productionMode).toBe(true);
    expect(ok.PUBLIC_URL).toBe("https://nodes.example.com");
  });

  it("trusts no proxy's X-Forwarded-For unless told how many proxies are in front", () => {
    expect(parseEnv({ DATA_DIR: tmp() }).TRUSTED_PROXY_HOPS).toBe(0);
    expect(parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "2" }).TRUSTED_PROXY_HOPS).toBe(2);
    expect(() => parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "-1" })).toThrow(/TRUSTED_PROXY_HOPS/);
    expect(() => parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "one" })).toThrow(/TRUSTED_PROXY_HOPS/);
  });

  it("requires GitHub sign-in variables in pairs", () => {
    expect(() => parseEnv({ DATA_DIR: tmp(), GITHUB_ID: "x" })).toThrow(/GITHUB_ID, GITHUB_SECRET/);
  });
});
