/**
 * The process's structured logger (pino): JSON lines in production, readable lines through
 * pino-pretty in development, level from LOG_LEVEL. Every line carries the process's pid,
 * hostname, role and version, so lines of several processes gathered in one place tell apart;
 * components log through a child carrying `component` (and, on request paths, `requestId` and
 * `projectId`). API keys and secrets are redacted by field name and, inside any logged string, by
 * their shape.
 */
import os from "node:os";
import pino, { type Logger, type LoggerOptions } from "pino";
import pretty from "pino-pretty";
import { logSettings } from "@/lib/env";
import { KEY_IN_TEXT, KEY_PREFIX } from "@/lib/keys/secret";
import { perProcess } from "@/lib/per-process";
import { version } from "@/package.json";

export type { Logger };

/** Field paths never written to a log. */
const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "signingKey",
  "*.signingKey",
  "authorization",
  "*.authorization",
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'headers["authorization"]',
  '*.headers["authorization"]',
  'headers["cookie"]',
  '*.headers["cookie"]',
];

/** API keys (whole or cut short, lib/keys/secret.ts), webhook signing keys (`whsec_…`) and URL credentials, wherever they appear in text. */
const SECRET_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [KEY_IN_TEXT, `${KEY_PREFIX}[redacted]`],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, "whsec_[redacted]"],
  [/\/\/[^/@\s:]+:[^/@\s]+@/g, "//[redacted]@"],
];

/** Masks secrets that a message or an error text may carry (a key in a URL path, a node URL with credentials). */
export function maskSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

function errSerializer(err: unknown) {
  const s = pino.stdSerializers.err(err as Error) as Record<string, unknown>;
  if (typeof s.message === "string") s.message = maskSecrets(s.message);
  if (typeof s.stack === "string") s.stack = maskSecrets(s.stack);
  return s;
}

function createLogger(): Logger {
  const { level, format, role } = logSettings();
  const options: LoggerOptions = {
    level,
    base: { pid: process.pid, hostname: os.hostname(), role, version },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: { err: errSerializer, error: errSerializer },
    formatters: {
      // Top-level text fields (a URL, a node's error text) may carry a key too.
      log(object) {
        for (const [k, v] of Object.entries(object)) if (typeof v === "string") object[k] = maskSecrets(v);
        return object;
      },
    },
    hooks: {
      // Strings passed as the message (or as printf arguments) are scrubbed too.
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) if (typeof args[i] === "string") args[i] = maskSecrets(args[i] as string);
        method.apply(this, args as Parameters<typeof method>);
      },
    },
  };
  if (format === "pretty") {
    return pino(options, pretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: "pid,hostname,role,version", translateTime: "SYS:HH:MM:ss.l", messageKey: "msg" }));
  }
  return pino(options);
}

// Per process (lib/per-process.ts): the server, the workers and the Next.js bundles write through one logger.
const root = perProcess("log", (): { logger?: Logger } => ({}));

/** The root logger (one per process, shared by the server, the workers and the Next.js bundle). */
export function logger(): Logger {
  root.logger ??= createLogger();
  return root.logger;
}

/** Makes `logger` this process's root logger: for tests that read what the process logs. */
export function setRootLogger(logger: Logger): void {
  root.logger = logger;
}

/** A child logger for one part of the service: every line carries `component` and the given fields. */
export function componentLogger(component: string, bindings: Record<string, unknown> = {}): Logger {
  return logger().child({ component, ...bindings });
}

/** The text of anything thrown, for a log line's message. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
