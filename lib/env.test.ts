import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, databaseUrl, debugSettings, parseEnv, prepareNextEnv, resetEnv, setDatabaseUrl } from "./env";

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
    expect(b.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY).toBe(a.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY);
    expect(Buffer.from(a.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY, "base64")).toHaveLength(32);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ APP_SECRET: a.APP_SECRET, NEXTAUTH_SECRET: a.NEXTAUTH_SECRET, NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: a.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY });
  });

  it("adds the server actions key to a data directory's secrets from before it, keeping the others", () => {
    const dir = tmp();
    const old = { APP_SECRET: "a".repeat(43), NEXTAUTH_SECRET: "b".repeat(43) };
    writeFileSync(path.join(dir, "secrets.json"), JSON.stringify(old));
    const env = parseEnv({ DATA_DIR: dir });
    expect(env).toMatchObject(old);
    expect(Buffer.from(env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY, "base64")).toHaveLength(32);
    expect(JSON.parse(readFileSync(path.join(dir, "secrets.json"), "utf8"))).toEqual({ ...old, NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY });
    expect(parseEnv({ DATA_DIR: dir }).NEXT_SERVER_ACTIONS_ENCRYPTION_KEY).toBe(env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY);
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

  it("with DATABASE_URL (processes that may run on other hosts), requires the shared secrets, names the missing ones and how to make them, and generates none", () => {
    const actionsKey = "c".repeat(43) + "=";
    for (const NODE_ENV of ["production", "development", "test"]) {
      const dir = tmp();
      expect(() => parseEnv({ NODE_ENV, DATABASE_URL: "postgres://db/x", DATA_DIR: dir })).toThrow(
        /APP_SECRET, NEXTAUTH_SECRET, NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: required with DATABASE_URL .*openssl rand -base64 32/,
      );
      expect(() => parseEnv({ NODE_ENV, DATABASE_URL: "postgres://db/x", DATA_DIR: dir, APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32) })).toThrow(
        /:\s+NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: required with DATABASE_URL/,
      );
      expect(existsSync(path.join(dir, "secrets.json"))).toBe(false);
    }
    const ok = parseEnv({ NODE_ENV: "production", DATABASE_URL: "postgres://db/x", APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: actionsKey, PUBLIC_URL: "https://nodes.example.com/" });
    expect(ok).toMatchObject({ productionMode: true, PUBLIC_URL: "https://nodes.example.com", NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: actionsKey });
  });

  it("takes a server actions key Next.js can import (base64 of 16, 24 or 32 bytes) and names a bad one", () => {
    for (const bytes of [16, 24, 32]) {
      const key = Buffer.alloc(bytes, 7).toString("base64");
      expect(parseEnv({ DATA_DIR: tmp(), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: key }).NEXT_SERVER_ACTIONS_ENCRYPTION_KEY).toBe(key);
    }
    for (const bad of [Buffer.alloc(20).toString("base64"), "not base64!", "a".repeat(28)]) {
      expect(() => parseEnv({ DATA_DIR: tmp(), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: bad }), bad).toThrow(/NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: must be a base64 AES key of 16, 24 or 32 bytes/);
    }
  });

  it("trusts no proxy's X-Forwarded-For unless told how many proxies are in front", () => {
    expect(parseEnv({ DATA_DIR: tmp() }).TRUSTED_PROXY_HOPS).toBe(0);
    expect(parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "2" }).TRUSTED_PROXY_HOPS).toBe(2);
    expect(() => parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "-1" })).toThrow(/TRUSTED_PROXY_HOPS/);
    expect(() => parseEnv({ DATA_DIR: tmp(), TRUSTED_PROXY_HOPS: "one" })).toThrow(/TRUSTED_PROXY_HOPS/);
  });

  it("reads SMTP_URL and MAIL_FROM together, naming the variable at fault", () => {
    const env = parseEnv({ DATA_DIR: tmp(), SMTP_URL: "smtps://user:pass@mail.example.com:465", MAIL_FROM: "Blockgate <no-reply@example.com>" });
    expect(env.SMTP_URL).toBe("smtps://user:pass@mail.example.com:465");
    expect(env.MAIL_FROM).toBe("Blockgate <no-reply@example.com>");
    expect(parseEnv({ DATA_DIR: tmp(), SMTP_URL: " ", MAIL_FROM: "" }).SMTP_URL).toBeUndefined();
    expect(() => parseEnv({ DATA_DIR: tmp(), SMTP_URL: "smtp://localhost:25" })).toThrow(/MAIL_FROM: required when SMTP_URL is set/);
    expect(() => parseEnv({ DATA_DIR: tmp(), SMTP_URL: "http://mail.example.com", MAIL_FROM: "a@b.c" })).toThrow(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
    for (const bad of ["nobody", "A <b>", "a@b.c\nBcc: x@y.z", "<a@b.c"]) {
      expect(() => parseEnv({ DATA_DIR: tmp(), SMTP_URL: "smtp://localhost:25", MAIL_FROM: bad }), bad).toThrow(/MAIL_FROM: must be an email address/);
    }
  });

  it("requires GitHub sign-in variables in pairs", () => {
    expect(() => parseEnv({ DATA_DIR: tmp(), GITHUB_ID: "x" })).toThrow(/GITHUB_ID, GITHUB_SECRET/);
  });

  it("lets webhooks reach private addresses over http only in a run nobody else can reach, unless told", () => {
    const prod = { NODE_ENV: "production", DATA_DIR: tmp() };
    const policy = (extra: Record<string, string>) => {
      const e = parseEnv({ ...prod, ...extra });
      return { allowPrivate: e.WEBHOOK_ALLOW_PRIVATE_URLS, httpsOnly: e.WEBHOOK_HTTPS_ONLY };
    };
    expect(policy({ NODE_ENV: "development" })).toEqual({ allowPrivate: true, httpsOnly: false });
    // npm start on a laptop: production build, bound to loopback, reached as localhost.
    expect(policy({})).toEqual({ allowPrivate: true, httpsOnly: false });
    expect(policy({ HOST: "0.0.0.0" })).toEqual({ allowPrivate: false, httpsOnly: true });
    expect(policy({ PUBLIC_URL: "https://nodes.example.com" })).toEqual({ allowPrivate: false, httpsOnly: true });
    // A proxy in front is configured: others reach the server through it.
    expect(policy({ TRUSTED_PROXY_HOPS: "1" })).toEqual({ allowPrivate: false, httpsOnly: true });
    expect(policy({ NODE_ENV: "development", TRUSTED_PROXY_HOPS: "1" })).toEqual({ allowPrivate: false, httpsOnly: true });
    expect(policy({ HOST: "0.0.0.0", WEBHOOK_ALLOW_PRIVATE_URLS: "on", WEBHOOK_HTTPS_ONLY: "off" })).toEqual({ allowPrivate: true, httpsOnly: false });
    expect(policy({ WEBHOOK_ALLOW_PRIVATE_URLS: "no", WEBHOOK_HTTPS_ONLY: "1" })).toEqual({ allowPrivate: false, httpsOnly: true });
  });

  it("reads DATABASE_POOL_SIZE as a pool size from 1 to 200 (default by role: all 10, web 8, worker 6), and the raw pool's size", () => {
    expect(parseEnv({ DATA_DIR: tmp() }).DATABASE_POOL_SIZE).toBe(10);
    expect(parseEnv({ DATA_DIR: tmp(), ROLE: "web" }).DATABASE_POOL_SIZE).toBe(8);
    expect(parseEnv({ DATA_DIR: tmp(), ROLE: "worker" }).DATABASE_POOL_SIZE).toBe(6);
    expect(parseEnv({ DATA_DIR: tmp(), ROLE: "worker", DATABASE_POOL_SIZE: "12" }).DATABASE_POOL_SIZE).toBe(12);
    expect(parseEnv({ DATA_DIR: tmp() }).DATABASE_RAW_POOL_SIZE).toBe(4);
    expect(() => parseEnv({ DATA_DIR: tmp(), DATABASE_RAW_POOL_SIZE: "0" })).toThrow(/DATABASE_RAW_POOL_SIZE/);
    expect(parseEnv({ DATA_DIR: tmp(), DATABASE_POOL_SIZE: " 25 " }).DATABASE_POOL_SIZE).toBe(25);
    expect(parseEnv({ DATA_DIR: tmp(), DATABASE_POOL_SIZE: "" }).DATABASE_POOL_SIZE).toBe(10);
    for (const bad of ["0", "201", "ten", "2.5", "-3"]) {
      expect(() => parseEnv({ DATA_DIR: tmp(), DATABASE_POOL_SIZE: bad }), bad).toThrow(/^Invalid configuration:\n {2}DATABASE_POOL_SIZE: /);
    }
  });

  it("reads DRAIN_MS (default 5000 in production with DATABASE_URL, 1000 otherwise) and a worker's listener, WORKER_HTTP_PORT (unset: none) on WORKER_HTTP_HOST (default HOST)", () => {
    const secrets = { APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(parseEnv({ DATA_DIR: tmp() }).DRAIN_MS).toBe(1000);
    expect(parseEnv({ DATA_DIR: tmp(), NODE_ENV: "production" }).DRAIN_MS).toBe(1000);
    expect(parseEnv({ NODE_ENV: "production", DATABASE_URL: "postgres://db/x", ...secrets }).DRAIN_MS).toBe(5000);
    expect(parseEnv({ NODE_ENV: "development", DATABASE_URL: "postgres://db/x", ...secrets }).DRAIN_MS).toBe(1000);
    expect(parseEnv({ DATA_DIR: tmp(), DRAIN_MS: "0" }).DRAIN_MS).toBe(0);
    expect(parseEnv({ NODE_ENV: "production", DATABASE_URL: "postgres://db/x", ...secrets, DRAIN_MS: "15000" }).DRAIN_MS).toBe(15000);
    for (const bad of ["-1", "60001", "soon"]) expect(() => parseEnv({ DATA_DIR: tmp(), DRAIN_MS: bad }), bad).toThrow(/^Invalid configuration:\n {2}DRAIN_MS: /);

    const env = parseEnv({ DATA_DIR: tmp(), ROLE: "worker" });
    expect([env.WORKER_HTTP_PORT, env.WORKER_HTTP_HOST]).toEqual([undefined, "127.0.0.1"]);
    expect(parseEnv({ DATA_DIR: tmp(), ROLE: "worker", HOST: "0.0.0.0", WORKER_HTTP_PORT: "9464" })).toMatchObject({ WORKER_HTTP_PORT: 9464, WORKER_HTTP_HOST: "0.0.0.0" });
    expect(parseEnv({ DATA_DIR: tmp(), WORKER_HTTP_PORT: "9464", WORKER_HTTP_HOST: "10.0.0.7" })).toMatchObject({ WORKER_HTTP_PORT: 9464, WORKER_HTTP_HOST: "10.0.0.7" });
    for (const bad of ["0", "65536", "metrics"]) expect(() => parseEnv({ DATA_DIR: tmp(), WORKER_HTTP_PORT: bad }), bad).toThrow(/WORKER_HTTP_PORT/);
  });

  it("reads OTEL_EXPORTER_OTLP_ENDPOINT as an http(s) URL (unset: no traces) and OTEL_SERVICE_NAME (default blockgate)", () => {
    const plain = parseEnv({ DATA_DIR: tmp() });
    expect(plain.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(plain.OTEL_SERVICE_NAME).toBe("blockgate");
    expect(parseEnv({ DATA_DIR: tmp(), OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SERVICE_NAME: " " }).OTEL_SERVICE_NAME).toBe("blockgate");
    expect(parseEnv({ DATA_DIR: tmp(), OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SERVICE_NAME: "bg-eu" })).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_SERVICE_NAME: "bg-eu",
    });
    for (const bad of ["collector:4318", "grpc://collector:4317"]) {
      expect(() => parseEnv({ DATA_DIR: tmp(), OTEL_EXPORTER_OTLP_ENDPOINT: bad }), bad).toThrow(/^Invalid configuration:\n {2}OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/);
    }
  });

  it("reads EMBEDDED_PG_PORT as a port (unset: chosen by the embedded cluster) and DATA_DIR (default .data)", () => {
    const env = parseEnv({ DATA_DIR: tmp() });
    expect(env.EMBEDDED_PG_PORT).toBeUndefined();
    expect(parseEnv({ DATA_DIR: tmp(), EMBEDDED_PG_PORT: "6543" }).EMBEDDED_PG_PORT).toBe(6543);
    for (const bad of ["0", "65536", "pg"]) expect(() => parseEnv({ DATA_DIR: tmp(), EMBEDDED_PG_PORT: bad }), bad).toThrow(/EMBEDDED_PG_PORT/);
    expect(parseEnv({ APP_SECRET: "a".repeat(32), NEXTAUTH_SECRET: "b".repeat(32) }).DATA_DIR).toBe(".data");
  });

  it("reads DEBUG and DEBUG_SCHEMA_ENGINE as switches, also when the rest of the configuration is bad", () => {
    for (const off of [undefined, "", "0", "false", "OFF", "no"]) {
      expect(parseEnv({ DATA_DIR: tmp(), DEBUG: off, DEBUG_SCHEMA_ENGINE: off })).toMatchObject({ DEBUG: false, DEBUG_SCHEMA_ENGINE: false });
      expect(debugSettings({ DEBUG: off, DEBUG_SCHEMA_ENGINE: off })).toEqual({ stacks: false, schemaEngine: false });
    }
    for (const on of ["1", "true", "yes", "*"]) {
      expect(parseEnv({ DATA_DIR: tmp(), DEBUG: on, DEBUG_SCHEMA_ENGINE: on })).toMatchObject({ DEBUG: true, DEBUG_SCHEMA_ENGINE: true });
      expect(debugSettings({ DEBUG: on, PORT: "not-a-port" })).toEqual({ stacks: true, schemaEngine: false });
    }
  });

  it("reads UPSTREAM_<PROTOCOL>_<NETWORK> as URL lists and names each bad one with the other bad variables", () => {
    const env = parseEnv({
      DATA_DIR: tmp(),
      UPSTREAM_BASE_SEPOLIA: " https://a.example/rpc , https://b.example/rpc ,",
      UPSTREAM_BABYLON_MAINNET: "wss://babylon.example/websocket",
      UPSTREAM_KAIA_MAINNET: "",
    });
    expect(env.UPSTREAMS).toEqual({ "base-sepolia": ["https://a.example/rpc", "https://b.example/rpc"], "babylon-mainnet": ["wss://babylon.example/websocket"] });
    try {
      parseEnv({ DATA_DIR: tmp(), UPSTREAM_ETHEREUM_MAINNET: "wss://eth.example", UPSTREAM_APTOS_TESTNET: "ftp://aptos.example", PORT: "0" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      expect(msg).toContain('UPSTREAM_ETHEREUM_MAINNET: "wss://eth.example" is not an http(s) URL');
      expect(msg).toContain('UPSTREAM_APTOS_TESTNET: "ftp://aptos.example" is not an http(s) URL');
      expect(msg).toContain("PORT:");
    }
  });

  it("knows the database the launcher started, before DATABASE_URL, until the configuration is read again", () => {
    const saved = process.env.DATABASE_URL;
    try {
      process.env.DATABASE_URL = "postgresql://db.example/blockgate";
      resetEnv();
      expect(databaseUrl()).toBe("postgresql://db.example/blockgate");
      setDatabaseUrl("postgresql://127.0.0.1:54329/postgres");
      expect(databaseUrl()).toBe("postgresql://127.0.0.1:54329/postgres");
      delete process.env.DATABASE_URL;
      resetEnv();
      expect(databaseUrl()).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
      resetEnv();
    }
  });

  it("prepares Next.js's environment: production unless developing or set, no telemetry", () => {
    const saved = { NODE_ENV: process.env.NODE_ENV, NEXT_TELEMETRY_DISABLED: process.env.NEXT_TELEMETRY_DISABLED };
    const env = process.env as Record<string, string | undefined>;
    try {
      delete env.NODE_ENV;
      delete env.NEXT_TELEMETRY_DISABLED;
      prepareNextEnv(true);
      expect(env.NODE_ENV).toBeUndefined();
      expect(env.NEXT_TELEMETRY_DISABLED).toBe("1");
      prepareNextEnv(false);
      expect(env.NODE_ENV).toBe("production");
      env.NODE_ENV = "test";
      prepareNextEnv(false);
      expect(env.NODE_ENV).toBe("test");
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
    }
  });
});
