import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

const emptyAsUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());
const port = (fallback: number) => z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(65535).default(fallback));
const secret = z.preprocess(
  emptyAsUndefined,
  z.string().min(32, "must be at least 32 characters (for example: openssl rand -base64 32)").optional(),
);

const nodeEnv = z.enum(["development", "production", "test"]).default("development");
const logLevel = z.preprocess(emptyAsUndefined, z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional());
const logFormat = z.preprocess(emptyAsUndefined, z.enum(["json", "pretty"]).optional());

const schema = z.object({
  NODE_ENV: nodeEnv,
  /** Default: info (warn under tests). */
  LOG_LEVEL: logLevel,
  /** Default: json in production, pretty otherwise. */
  LOG_FORMAT: logFormat,
  HOST: z.preprocess(emptyAsUndefined, z.string().default("127.0.0.1")),
  PORT: port(3000),
  PUBLIC_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /**
   * Reverse proxies in front of the server whose X-Forwarded-For entries are trusted for the
   * client's address (default 0: the socket's peer, and a client's X-Forwarded-For is ignored).
   */
  TRUSTED_PROXY_HOPS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(10).default(0)),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(".data")),
  DATABASE_URL: z.preprocess(
    emptyAsUndefined,
    z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL").optional(),
  ),
  EMBEDDED_PG_PORT: port(54329),
  APP_SECRET: secret,
  NEXTAUTH_SECRET: secret,
  GITHUB_ID: optionalString,
  GITHUB_SECRET: optionalString,
  ROLE: z.preprocess(emptyAsUndefined, z.enum(["all", "web", "worker"]).default("all")),
  KEY_CACHE_TTL_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(60_000).default(5000)),
  USAGE_FLUSH_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(50).max(60_000).default(1000)),
  DEVNETS: z.preprocess(emptyAsUndefined, z.enum(["on", "off"]).default("on")),
  EVM_BLOCK_TIME_S: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(60).default(2)),
  EVM_DEVNET_IDLE_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(10_000).default(15 * 60_000)),
  CONSENSUS_BLOCK_TIME_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(60_000).default(1000)),
  /** First height a consensus follower ingests into an empty index (default: 100 below the node's head). */
  UPSTREAM_START_HEIGHT: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .trim()
      .regex(/^[1-9]\d{0,17}$/, "must be a block height (a positive integer)")
      .transform(BigInt)
      .optional(),
  ),
});

export type Env = z.infer<typeof schema> & {
  APP_SECRET: string;
  NEXTAUTH_SECRET: string;
  PUBLIC_URL: string;
  /** True when running with production settings against an external database. */
  productionMode: boolean;
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n");
}

/**
 * Secrets for the embedded default: generated once into <DATA_DIR>/secrets.json (mode 600) so
 * `npm start` needs no manual step and sessions survive restarts.
 */
function loadOrCreateLocalSecrets(dataDir: string): { APP_SECRET: string; NEXTAUTH_SECRET: string } {
  const file = path.join(dataDir, "secrets.json");
  if (existsSync(file)) {
    const parsed = z
      .object({ APP_SECRET: z.string().min(32), NEXTAUTH_SECRET: z.string().min(32) })
      .safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (parsed.success) return parsed.data;
    throw new ConfigError(`${file} is damaged; delete it to generate new secrets (existing API keys can then no longer be revealed).`);
  }
  mkdirSync(dataDir, { recursive: true });
  const secrets = {
    APP_SECRET: randomBytes(32).toString("base64url"),
    NEXTAUTH_SECRET: randomBytes(32).toString("base64url"),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return secrets;
}

/** Validates the environment; throws ConfigError naming every bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n${formatIssues(parsed.error)}`);
  const env = parsed.data;
  const productionMode = env.NODE_ENV === "production" && env.DATABASE_URL !== undefined;
  let { APP_SECRET, NEXTAUTH_SECRET } = env;
  if (!APP_SECRET || !NEXTAUTH_SECRET) {
    if (productionMode) {
      const missing = [!APP_SECRET && "APP_SECRET", !NEXTAUTH_SECRET && "NEXTAUTH_SECRET"].filter(Boolean).join(", ");
      throw new ConfigError(`Invalid configuration:\n  ${missing}: required in production (NODE_ENV=production with DATABASE_URL set)`);
    }
    const local = loadOrCreateLocalSecrets(path.resolve(env.DATA_DIR));
    APP_SECRET ??= local.APP_SECRET;
    NEXTAUTH_SECRET ??= local.NEXTAUTH_SECRET;
  }
  if ((env.GITHUB_ID === undefined) !== (env.GITHUB_SECRET === undefined)) {
    throw new ConfigError("Invalid configuration:\n  GITHUB_ID, GITHUB_SECRET: set both to enable GitHub sign-in, or neither");
  }
  const PUBLIC_URL = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  return { ...env, APP_SECRET, NEXTAUTH_SECRET, PUBLIC_URL, productionMode };
}

const logSchema = z.object({ NODE_ENV: z.preprocess(emptyAsUndefined, nodeEnv), LOG_LEVEL: logLevel, LOG_FORMAT: logFormat });

/**
 * The logger's settings alone: the logger exists before (and even when) the full configuration
 * fails to load, so that failure can be logged. A bad value here is reported by parseEnv.
 */
export function logSettings(source: Record<string, string | undefined> = process.env): { level: string; format: "json" | "pretty" } {
  const parsed = logSchema.safeParse(source);
  const env = parsed.success ? parsed.data : { NODE_ENV: "development" as const, LOG_LEVEL: undefined, LOG_FORMAT: undefined };
  return {
    level: env.LOG_LEVEL ?? (env.NODE_ENV === "test" ? "warn" : "info"),
    format: env.LOG_FORMAT ?? (env.NODE_ENV === "production" ? "json" : "pretty"),
  };
}

const globalForEnv = globalThis as unknown as { __blockgateEnv?: Env };

/**
 * The validated configuration of this process. The launcher calls loadEnv() at start-up and
 * exports the resolved secrets to process.env, so Next.js code in the same process sees them.
 */
export function getEnv(): Env {
  globalForEnv.__blockgateEnv ??= parseEnv();
  return globalForEnv.__blockgateEnv;
}

export function loadEnv(): Env {
  // A .env file in the working directory fills variables that the environment does not set.
  if (existsSync(".env")) process.loadEnvFile(".env");
  const env = parseEnv();
  globalForEnv.__blockgateEnv = env;
  process.env.APP_SECRET = env.APP_SECRET;
  process.env.NEXTAUTH_SECRET = env.NEXTAUTH_SECRET;
  process.env.PUBLIC_URL = env.PUBLIC_URL;
  process.env.NEXTAUTH_URL ??= env.PUBLIC_URL;
  return env;
}
