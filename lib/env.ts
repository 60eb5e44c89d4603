import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { NETWORK_DEFINITIONS, parseUpstreams, upstreamVariable } from "@/lib/network-definitions";
import { perProcess } from "@/lib/per-process";

const emptyAsUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());
const optionalPort = z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(65535).optional());
const integer = (min: number, max: number, fallback: number) => z.preprocess(emptyAsUndefined, z.coerce.number().int().min(min).max(max).default(fallback));
const port = (fallback: number) => integer(1, 65535, fallback);
/** A switch: unset, empty, 0, false, off or no is off; any other value is on. */
const flag = z.preprocess(emptyAsUndefined, z.string().optional()).transform((v) => v !== undefined && !/^(0|false|off|no)$/i.test(v.trim()));
/** A switch with no fixed default: unset or empty stays undefined (the default is computed). */
const optionalFlag = z.preprocess(emptyAsUndefined, z.string().optional()).transform((v) => (v === undefined ? undefined : !/^(0|false|off|no)$/i.test(v.trim())));
const secret = z.preprocess(
  emptyAsUndefined,
  z.string().min(32, "must be at least 32 characters (for example: openssl rand -base64 32)").optional(),
);
/** Next.js imports it as a raw AES-GCM key (atob): base64 of 16, 24 or 32 bytes. */
const aesKey = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .trim()
    .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && [16, 24, 32].includes(Buffer.from(v, "base64").length), "must be a base64 AES key of 16, 24 or 32 bytes (for example: openssl rand -base64 32)")
    .optional(),
);

/** The secrets every process of one deployment must share (checked through cluster_members). */
export const SHARED_SECRETS = ["APP_SECRET", "NEXTAUTH_SECRET", "NEXT_SERVER_ACTIONS_ENCRYPTION_KEY"] as const;
export type SharedSecret = (typeof SHARED_SECRETS)[number];

/** Most single EVM node calls batched upstream (UPSTREAM_BATCH_MAX) unless configured. */
export const DEFAULT_UPSTREAM_BATCH_MAX = 50;
/** Retries of a failed webhook delivery: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (Standard Webhooks' schedule). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

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
  /**
   * On SIGTERM or SIGINT, how long a web process keeps serving while GET /readyz answers 503, so
   * a load balancer stops sending to it before it stops listening. Default: 5000 in production
   * with DATABASE_URL, 1000 otherwise (Ctrl-C stays quick).
   */
  DRAIN_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(60_000).optional()),
  /** ROLE=worker: the port of its small HTTP listener (GET /healthz, /readyz). Unset: none. */
  WORKER_HTTP_PORT: optionalPort,
  /** The address that listener binds. Default: HOST. */
  WORKER_HTTP_HOST: optionalString,
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
  /**
   * Redis (or Valkey), redis://[user:pass@]host:6379[/db] or rediss://…: the processes of a cluster
   * share their limits through it. Unset: each process enforces its share of every limit (the limit
   * divided by the live web processes).
   */
  REDIS_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).optional()),
  /** Connections in each process's database pool (console, keys, usage, workers). Default by ROLE: all 10, web 8, worker 6. */
  DATABASE_POOL_SIZE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(200).optional()),
  /** Connections in each process's pool for public API queries (consensus reads and searches), apart from the rest; opened by web processes only. */
  DATABASE_PUBLIC_POOL_SIZE: integer(1, 200, 4),
  /** Connections in each process's pool for chain ingestion, webhook followers and delivery, and the request log. */
  DATABASE_RAW_POOL_SIZE: integer(1, 200, 4),
  /** A public API query running longer than this is stopped (PostgreSQL statement_timeout). */
  PUBLIC_STATEMENT_TIMEOUT_MS: integer(100, 600_000, 5000),
  /** A JSON-RPC batch starts no new item after this long; the rest are answered with an error. */
  PUBLIC_BATCH_BUDGET_MS: integer(100, 600_000, 10_000),
  /**
   * This process applies pending migrations as it starts. Default: on for the embedded database,
   * off with DATABASE_URL, where `npm run db:migrate` applies them once and every process waits for it.
   */
  MIGRATE_ON_START: optionalFlag,
  /** Unset: a free port, chosen at the first start and remembered in DATA_DIR/postgres.json. */
  EMBEDDED_PG_PORT: optionalPort,
  APP_SECRET: secret,
  NEXTAUTH_SECRET: secret,
  /** Encrypts what the console's server actions send to the browser and get back (Next.js reads it from the environment). */
  NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: aesKey,
  /**
   * Outgoing mail server, smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465.
   * Unset: no mail is sent and sign-ups need no email verification.
   */
  SMTP_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" }).optional()),
  /** Sender of the mail Blockgate sends: an address, or `Name <address>`. */
  MAIL_FROM: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .trim()
      .regex(/^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, "must be an email address, or Name <address>")
      .optional(),
  ),
  /**
   * Sign-ups per hour over all clients that need no proof of work (a sixth of them may come at
   * once); past that, a new sign-up must come with one, harder the further over. 0: every sign-up
   * needs one.
   */
  SIGN_UP_FREE_PER_HOUR: integer(0, 1_000_000, 600),
  /**
   * Sign-ups per hour from one client address, all of them at once; a network (an IPv4 /24, an
   * IPv6 /48) gets twice as many. Raise it where many people share one address (an office NAT).
   */
  SIGN_UP_PER_ADDRESS_PER_HOUR: integer(1, 1_000_000, 30),
  GITHUB_ID: optionalString,
  GITHUB_SECRET: optionalString,
  ROLE: z.preprocess(emptyAsUndefined, z.enum(["all", "web", "worker"]).default("all")),
  KEY_CACHE_TTL_MS: integer(0, 60_000, 5000),
  /**
   * How often each LISTEN connection (key invalidations, blocks stored, webhook messages due)
   * checks itself with a notification of its own; two missed in a row: it connects again.
   */
  LISTEN_HEARTBEAT_MS: integer(100, 600_000, 5000),
  USAGE_FLUSH_MS: integer(50, 60_000, 1000),
  /**
   * Days the per-minute usage buckets are kept (charts with steps under an hour read them); hours
   * and days are kept for good. The default covers every minute-step range the usage API answers
   * up to now (1,500 steps of 15 minutes).
   */
  USAGE_MINUTE_RETENTION_DAYS: integer(1, 3650, 16),
  /**
   * off: the public API meters no usage and enforces no plan limit (CU per second, allowance),
   * for a private deployment without accounts to bill, or to measure what metering costs
   * (npm run bench -- usage).
   */
  USAGE_METERING: z.preprocess(emptyAsUndefined, z.enum(["on", "off"]).default("on")),
  /** The console's request log (the last 1,000 requests per project, and recent traffic): on or off. */
  REQUEST_LOG: z.preprocess(emptyAsUndefined, z.enum(["on", "off"]).default("on")),
  DEVNETS: z.preprocess(emptyAsUndefined, z.enum(["on", "off"]).default("on")),
  EVM_BLOCK_TIME_S: integer(1, 60, 2),
  EVM_DEVNET_IDLE_MS: integer(10_000, Number.MAX_SAFE_INTEGER, 15 * 60_000),
  /** A running EVM devnet's state is saved into the database every this many blocks (and at a clean stop). */
  EVM_DEVNET_SAVE_BLOCKS: integer(1, 1_000_000, 15),
  /**
   * The newest blocks an EVM devnet keeps with their transactions and receipts (anvil's
   * --transaction-block-keeper); past twice as many, anvil is restarted from its state trimmed to
   * them (lib/evm/devnet/cluster.ts). Older blocks are gone, as from a pruned node. 0 keeps all; at
   * least 10,000 otherwise: the blocks a webhook follower catches up after a stop (CATCH_UP_LIMIT),
   * which must still be there (the EVM devnet cannot tell a follower where its chain now starts).
   */
  EVM_DEVNET_RETAIN_BLOCKS: integer(0, Number.MAX_SAFE_INTEGER, 10_000).refine((n) => n === 0 || n >= 10_000, "must be 0 (keep all) or at least 10000"),
  /** The address EVM devnets (anvil) listen on, in the worker process that runs them. */
  DEVNET_HOST: z.preprocess(emptyAsUndefined, z.string().default("127.0.0.1")),
  /**
   * The host name other processes reach those devnets at (registered in the database). Default:
   * DEVNET_HOST, or this host's name when DEVNET_HOST is a wildcard (0.0.0.0, ::).
   */
  DEVNET_ADVERTISE_HOST: optionalString,
  CONSENSUS_BLOCK_TIME_MS: integer(100, 60_000, 1000),
  APTOS_BLOCK_TIME_MS: integer(100, 60_000, 1000),
  /**
   * How often the retention worker (one per cluster) removes what is older than the windows below,
   * and the webhook history older than 30 days.
   */
  RETENTION_INTERVAL_MS: integer(1000, 86_400_000, 600_000),
  /**
   * The newest blocks a consensus devnet's index keeps; older ones are removed, as a pruned node
   * forgets them (status's earliest_block_height moves up). 0 keeps all.
   */
  CONSENSUS_DEVNET_RETAIN_BLOCKS: integer(0, Number.MAX_SAFE_INTEGER, 3600),
  /** The same for the index of a consensus network followed from its upstream node. */
  CONSENSUS_UPSTREAM_RETAIN_BLOCKS: integer(0, Number.MAX_SAFE_INTEGER, 100_000),
  /** Blocks the Aptos devnet keeps (older ones are pruned, as a fullnode prunes); 0 keeps all. */
  APTOS_DEVNET_KEEP_BLOCKS: integer(0, Number.MAX_SAFE_INTEGER, 3600),
  /**
   * The newest transactions (versions) the index of an Aptos network followed from its upstream
   * keeps, whole blocks at a time (oldest_ledger_version moves up). 0 keeps all.
   */
  APTOS_UPSTREAM_RETAIN_VERSIONS: integer(0, Number.MAX_SAFE_INTEGER, 1_000_000),
  /**
   * Webhook URLs may point at private, loopback, link-local, unique-local, multicast or unspecified
   * addresses. Default: on for a local run (not production, or bound to loopback with a loopback
   * PUBLIC_URL, and no TRUSTED_PROXY_HOPS) until a request comes through a reverse proxy, off
   * otherwise (webhookPrivateUrlsAllowed).
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: optionalFlag,
  /** Webhook URLs must be https. Default: the opposite of WEBHOOK_ALLOW_PRIVATE_URLS's default. */
  WEBHOOK_HTTPS_ONLY: optionalFlag,
  /** A webhook delivery attempt that has no complete answer after this long fails as a timeout. */
  WEBHOOK_TIMEOUT_MS: integer(100, 120_000, 15_000),
  /**
   * Delays before each retry of a failed webhook delivery, in milliseconds, comma-separated (±20 %
   * jitter is added); after the last one the message fails. Default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
   */
  WEBHOOK_RETRY_SCHEDULE_MS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .trim()
      .regex(/^\d{1,10}(\s*,\s*\d{1,10}){0,19}$/, "must be 1 to 20 delays in milliseconds, comma-separated (for example 5000,300000)")
      .transform((v) => v.split(",").map((d) => Number(d.trim())))
      .refine((ds) => ds.every((d) => d <= 7 * 24 * 3600_000), "each delay must be at most 7 days (604800000 ms)")
      .default(() => [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS]),
  ),
  /** Webhook deliveries in flight at once in one process, and to one receiver host (host:port). */
  WEBHOOK_DELIVERY_CONCURRENCY: integer(1, 10_000, 256),
  WEBHOOK_DELIVERY_PER_HOST: integer(1, 1000, 16),
  /** How often an idle delivery worker looks for due messages. */
  WEBHOOK_DELIVERY_POLL_MS: integer(10, 60_000, 100),
  /** How often a webhook follower at the chain's head asks the node for a new block. */
  WEBHOOK_FOLLOWER_POLL_MS: integer(50, 60_000, 100),
  /**
   * Most single EVM node calls sent upstream together as one JSON-RPC batch when they arrive in the
   * same turn of the event loop (1: every call alone, for a provider that refuses or bills batches).
   */
  UPSTREAM_BATCH_MAX: integer(1, 1000, DEFAULT_UPSTREAM_BATCH_MAX),
  /** First height a consensus or Aptos follower stores into an empty index (default: 100 below the node's head). */
  UPSTREAM_START_HEIGHT: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .trim()
      .regex(/^[1-9]\d{0,17}$/, "must be a block height (a positive integer)")
      .transform(BigInt)
      .optional(),
  ),
  /**
   * An OpenTelemetry collector's OTLP/HTTP base URL: spans go to <it>/v1/traces (lib/tracing.ts).
   * Unset: no traces, and the tracing SDK is not loaded.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL (the collector's OTLP/HTTP base, such as http://localhost:4318)" }).optional(),
  ),
  /** The service.name of this process's spans. */
  OTEL_SERVICE_NAME: z.preprocess(emptyAsUndefined, z.string().trim().min(1).max(200).default("blockgate")),
  /**
   * A token for GET /metrics, sent as Authorization: Bearer <token>: required wherever metrics are
   * served once set, and what opens them on the public port when DATABASE_URL is set.
   */
  METRICS_TOKEN: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[\x21-\x7e]{16,}$/, "must be at least 16 printable characters without spaces (for example: openssl rand -hex 32)")
      .optional(),
  ),
  /** A listener of its own for GET /metrics (open unless METRICS_TOKEN is set), apart from the public port. */
  METRICS_PORT: optionalPort,
  /** The address METRICS_PORT listens on. Default: HOST. */
  METRICS_HOST: optionalString,
  /** Start-up failures print their stack trace. */
  DEBUG: flag,
  /** Migration commands print the schema engine's own messages. */
  DEBUG_SCHEMA_ENGINE: flag,
});

/** DATABASE_POOL_SIZE unless set: a worker serves no console or keys, a web process no ingestion. */
const DEFAULT_POOL_SIZE = { all: 10, web: 8, worker: 6 } as const;

export type Env = Omit<z.infer<typeof schema>, "WEBHOOK_ALLOW_PRIVATE_URLS" | "WEBHOOK_HTTPS_ONLY" | "DATABASE_POOL_SIZE" | "DRAIN_MS" | "WORKER_HTTP_HOST"> & {
  DATABASE_POOL_SIZE: number;
  DRAIN_MS: number;
  WORKER_HTTP_HOST: string;
  APP_SECRET: string;
  NEXTAUTH_SECRET: string;
  NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: string;
  PUBLIC_URL: string;
  /** True when running with production settings against an external database. */
  productionMode: boolean;
  /** Upstream node URLs by network slug, from UPSTREAM_<PROTOCOL>_<NETWORK> (networks without one are absent). */
  UPSTREAMS: Readonly<Record<string, readonly string[]>>;
  /** As configured or by the default at start-up; webhookPrivateUrlsAllowed() says whether it still holds. */
  WEBHOOK_ALLOW_PRIVATE_URLS: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_URLS is on by the local default, not set: it ends at the first request through a proxy. */
  webhookPrivateUrlsByDefault: boolean;
  WEBHOOK_HTTPS_ONLY: boolean;
};

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * A run nobody else can reach: not production, or a server bound to loopback whose public URL is
 * loopback too, and no proxy in front is configured. There, webhooks may go to receivers on this
 * machine or network (the devnets are local too); anywhere else such URLs would let a user make the
 * server call its own network. A reverse proxy on the same machine makes a server bound to loopback
 * public: the first request that comes through one ends the local run for webhook URLs.
 */
function localRun(nodeEnv: string, host: string, publicUrl: string, trustedProxyHops: number): boolean {
  return trustedProxyHops === 0 && (nodeEnv !== "production" || (LOOPBACK_HOST.test(host) && LOOPBACK_HOST.test(new URL(publicUrl).hostname)));
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const issueLines = (error: z.ZodError): string[] => error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);

function invalid(lines: string[]): ConfigError {
  return new ConfigError(`Invalid configuration:\n${lines.map((l) => `  ${l}`).join("\n")}`);
}

/**
 * Secrets for the embedded default: generated once into <DATA_DIR>/secrets.json (mode 600) so
 * `npm start` needs no manual step and sessions survive restarts. A file from before a secret was
 * added gains it.
 */
function loadOrCreateLocalSecrets(dataDir: string): Record<SharedSecret, string> {
  const file = path.join(dataDir, "secrets.json");
  const generate: Record<SharedSecret, () => string> = {
    APP_SECRET: () => randomBytes(32).toString("base64url"),
    NEXTAUTH_SECRET: () => randomBytes(32).toString("base64url"),
    NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: () => randomBytes(32).toString("base64"),
  };
  let stored: Partial<Record<SharedSecret, string>> = {};
  if (existsSync(file)) {
    const parsed = z
      .object({ APP_SECRET: z.string().min(32), NEXTAUTH_SECRET: z.string().min(32), NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: aesKey })
      .safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success) throw new ConfigError(`${file} is damaged; delete it to generate new secrets (existing API keys can then no longer be revealed).`);
    stored = parsed.data;
  }
  const secrets = Object.fromEntries(SHARED_SECRETS.map((name) => [name, stored[name] ?? generate[name]()])) as Record<SharedSecret, string>;
  if (SHARED_SECRETS.some((name) => stored[name] === undefined)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return secrets;
}

function definedSecrets(env: Partial<Record<SharedSecret, string>>): Partial<Record<SharedSecret, string>> {
  return Object.fromEntries(SHARED_SECRETS.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
}

/** Validates the environment; throws ConfigError naming every bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = schema.safeParse(source);
  const upstream = parseUpstreams(source);
  const problems = [
    ...(parsed.success ? [] : issueLines(parsed.error)),
    ...upstream.problems.map((p) => `${p.variable}: ${p.message}`),
  ];
  if (!parsed.success || problems.length > 0) throw invalid(problems);
  const env = parsed.data;
  const productionMode = env.NODE_ENV === "production" && env.DATABASE_URL !== undefined;
  // With DATABASE_URL the processes sharing the database may run on other hosts: secrets generated
  // per data directory would differ between them (a worker could not decrypt another's signing keys).
  const missing = SHARED_SECRETS.filter((name) => env[name] === undefined);
  if (missing.length > 0 && env.DATABASE_URL !== undefined) {
    throw invalid([`${missing.join(", ")}: required with DATABASE_URL (every process sharing the database needs the same values); generate each with: openssl rand -base64 32`]);
  }
  const secrets = missing.length > 0 ? { ...loadOrCreateLocalSecrets(path.resolve(env.DATA_DIR)), ...definedSecrets(env) } : (env as Record<SharedSecret, string>);
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT) {
    throw invalid(["METRICS_PORT: must differ from PORT (the public port serves /metrics itself: see METRICS_TOKEN)"]);
  }
  if ((env.GITHUB_ID === undefined) !== (env.GITHUB_SECRET === undefined)) {
    throw invalid(["GITHUB_ID, GITHUB_SECRET: set both to enable GitHub sign-in, or neither"]);
  }
  if (env.SMTP_URL !== undefined && env.MAIL_FROM === undefined) {
    throw invalid(["MAIL_FROM: required when SMTP_URL is set (the sender of verification mail, for example Blockgate <no-reply@example.com>)"]);
  }
  const PUBLIC_URL = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  const local = localRun(env.NODE_ENV, env.HOST, PUBLIC_URL, env.TRUSTED_PROXY_HOPS);
  return {
    ...env,
    DATABASE_POOL_SIZE: env.DATABASE_POOL_SIZE ?? DEFAULT_POOL_SIZE[env.ROLE],
    DRAIN_MS: env.DRAIN_MS ?? (productionMode ? 5000 : 1000),
    WORKER_HTTP_HOST: env.WORKER_HTTP_HOST ?? env.HOST,
    APP_SECRET: secrets.APP_SECRET,
    NEXTAUTH_SECRET: secrets.NEXTAUTH_SECRET,
    NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: secrets.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY,
    PUBLIC_URL,
    productionMode,
    UPSTREAMS: upstream.upstreams,
    WEBHOOK_ALLOW_PRIVATE_URLS: env.WEBHOOK_ALLOW_PRIVATE_URLS ?? local,
    webhookPrivateUrlsByDefault: env.WEBHOOK_ALLOW_PRIVATE_URLS === undefined && local,
    WEBHOOK_HTTPS_ONLY: env.WEBHOOK_HTTPS_ONLY ?? !local,
  };
}

/** Whether `name` is a variable the configuration reads: a setting above or a network's upstream URL (UPSTREAM_<PROTOCOL>_<NETWORK>). */
export function isConfigVariable(name: string): boolean {
  return Object.hasOwn(schema.shape, name) || NETWORK_DEFINITIONS.some((d) => upstreamVariable(d) === name);
}

const databaseSchema = schema.pick({ DATA_DIR: true, DATABASE_URL: true, EMBEDDED_PG_PORT: true });

/**
 * Which database to use, without the rest of the configuration: database scripts (bin/db.ts)
 * need no app secrets and must not generate them.
 */
export function databaseSettings(source: Record<string, string | undefined> = process.env): z.infer<typeof databaseSchema> {
  const parsed = databaseSchema.safeParse(source);
  if (!parsed.success) throw invalid(issueLines(parsed.error));
  return parsed.data;
}

const logSchema = z.object({ NODE_ENV: z.preprocess(emptyAsUndefined, nodeEnv), LOG_LEVEL: logLevel, LOG_FORMAT: logFormat, ROLE: schema.shape.ROLE });

/**
 * The logger's settings alone: the logger exists before (and even when) the full configuration
 * fails to load, so that failure can be logged. A bad value here is reported by parseEnv.
 */
export function logSettings(source: Record<string, string | undefined> = process.env): { level: string; format: "json" | "pretty"; role: Env["ROLE"] } {
  const parsed = logSchema.safeParse(source);
  const env = parsed.success ? parsed.data : { NODE_ENV: "development" as const, LOG_LEVEL: undefined, LOG_FORMAT: undefined, ROLE: "all" as const };
  return {
    level: env.LOG_LEVEL ?? (env.NODE_ENV === "test" ? "warn" : "info"),
    format: env.LOG_FORMAT ?? (env.NODE_ENV === "production" ? "json" : "pretty"),
    role: env.ROLE,
  };
}

const debugSchema = z.object({ DEBUG: flag, DEBUG_SCHEMA_ENGINE: flag });

/**
 * The diagnostic switches alone: a start-up failure (bad configuration included) prints its stack
 * when DEBUG is on, so they are read even when the full configuration does not load.
 */
export function debugSettings(source: Record<string, string | undefined> = process.env): { stacks: boolean; schemaEngine: boolean } {
  const { DEBUG, DEBUG_SCHEMA_ENGINE } = debugSchema.parse(source);
  return { stacks: DEBUG, schemaEngine: DEBUG_SCHEMA_ENGINE };
}

/**
 * What Next.js reads from this process's environment when it loads: production unless running
 * for development (an explicit NODE_ENV wins), and no telemetry. The launcher calls it first.
 */
export function prepareNextEnv(dev: boolean): void {
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  if (!dev) (process.env as Record<string, string>).NODE_ENV ??= "production";
}

// Per process (lib/per-process.ts): the Next.js bundles read what the launcher loaded.
const state = perProcess("env", (): { env?: Env; databaseUrl?: string; proxied?: boolean } => ({}));

/**
 * The validated configuration of this process, read once. The launcher calls loadEnv() at
 * start-up; the Next.js bundle in the same process shares the result.
 */
export function getEnv(): Env {
  state.env ??= parseEnv();
  return state.env;
}

/**
 * Reads and validates the configuration for a starting service, from the environment and a .env
 * file in the working directory (which fills variables the environment does not set). Hands
 * next-auth and Next.js, which read their own variables, the resolved session secret, origin and
 * server actions key (Next.js prefers the environment's key to the one its build embedded).
 */
export function loadEnv(): Env {
  if (existsSync(".env")) process.loadEnvFile(".env");
  resetEnv();
  const env = getEnv();
  process.env.NEXTAUTH_SECRET = env.NEXTAUTH_SECRET;
  process.env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY = env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY;
  process.env.NEXTAUTH_URL ??= env.PUBLIC_URL;
  return env;
}

/** Forgets the configuration read so far: the next getEnv() reads the environment again (tests that change it). */
export function resetEnv(): void {
  state.env = undefined;
  state.databaseUrl = undefined;
  state.proxied = undefined;
}

/**
 * Whether webhook URLs may reach private addresses now: WEBHOOK_ALLOW_PRIVATE_URLS, whose local
 * default ends once a request came through a reverse proxy. Kept per process (the Next.js bundle
 * sees it too); each web process of a cluster ends it on its own first such request.
 */
export function webhookPrivateUrlsAllowed(env: Env = getEnv()): boolean {
  return env.WEBHOOK_ALLOW_PRIVATE_URLS && !(env.webhookPrivateUrlsByDefault && state.proxied === true);
}

/** Records that a request came through a reverse proxy. True when that ended private webhook URLs allowed by the local default (the caller says so). */
export function requestCameThroughProxy(): boolean {
  if (state.proxied === true) return false;
  state.proxied = true;
  return getEnv().webhookPrivateUrlsByDefault;
}

/**
 * The PostgreSQL this process uses: the one the launcher started (the embedded cluster when
 * DATABASE_URL is unset), else DATABASE_URL.
 */
export function databaseUrl(): string | undefined {
  return state.databaseUrl ?? getEnv().DATABASE_URL;
}

/** Records the database the launcher started or connected to, for every part of this process. */
export function setDatabaseUrl(url: string): void {
  state.databaseUrl = url;
}
