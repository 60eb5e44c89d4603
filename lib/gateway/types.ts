import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Plan } from "@/lib/db/generated/enums";
import type { KeyPrincipal, Verification } from "@/lib/keys/verifier";
import type { SharedLimits } from "@/lib/limits/shared";
import type { Network } from "@/lib/networks";
import type { UsageSample } from "@/lib/usage/meter";
import type { RequestLogEntry } from "@/lib/usage/request-log";
import type { ThroughputLimiter } from "./limits";

export interface GatewayContext {
  req: IncomingMessage;
  url: URL;
  requestId: string;
  network: Network;
  principal: KeyPrincipal;
  /** Reads the body, refusing more than `limit` bytes with 413 CONTENTS_TOO_LARGE. */
  body(limit?: number): Promise<Buffer>;
  /** Takes throughput tokens for `cu` (429 TOO_MANY_REQUESTS with Retry-After when over the plan's rate) before doing work. */
  charge(cu: number): void;
  /**
   * Throws EXCEEDED_QUOTA_LIMIT (with Retry-After) when `cu` more would take the project past its
   * plan's allowance, unless overage applies: before work bought in bulk within the call, whose CU
   * `meter` then records with the call's own.
   */
  allowance(cu: number): void;
  /**
   * Records one metered call (a JSON-RPC batch records one per item), with its latency so far.
   * `httpStatus` gives a failed call's status class; a failure without one is a JSON-RPC error.
   */
  meter(endpoint: string, cu: number, error: boolean, httpStatus?: number): void;
}

export interface GatewayResponse {
  status: number;
  /** Serialised as JSON unless it is a string or Buffer; none is sent with status 204. */
  body: unknown;
  headers?: Record<string, string>;
}

export interface Endpoint {
  methods: readonly string[];
  handle(ctx: GatewayContext): Promise<GatewayResponse>;
}

export interface RouteMatch {
  /** Network slug (`ethereum-mainnet`), or protocol and network path segments for /v1. */
  network: { slug: string } | { protocol: string; network: string };
  endpoint: Endpoint;
  /** Key given in the path (/node and /cometbft). */
  pathKey?: string;
}

/** What a route without a key gets: no project, no network, no metering. */
export interface OpenContext {
  req: IncomingMessage;
  url: URL;
  requestId: string;
  body(limit?: number): Promise<Buffer>;
}

/** A route that needs no API key and belongs to no network (the webhook test inbox, the OpenAPI document). */
export interface OpenRoute {
  open: {
    methods: readonly string[];
    handle(ctx: OpenContext): Promise<GatewayResponse>;
  };
}

/** What a WebSocket endpoint gets once the upgrade request's key is verified. */
export interface SocketContext {
  req: IncomingMessage;
  requestId: string;
  network: Network;
  principal: KeyPrincipal;
  /** A context for one call or event on the socket: its throughput charge and its metering (latency from now). */
  call(): GatewayContext;
  /** Throws EXCEEDED_QUOTA_LIMIT when the project has used its allowance; a promise when it must read the database first. */
  quota(): Promise<void> | undefined;
  /** What limits held by every web process together (connections per key) are shared through: the gateway's. */
  limits: SharedLimits;
  /**
   * Registers how the connection ends when the server stops (a WebSocket: a close frame saying
   * why, so the client is not cut off); returns how to forget it once the connection closed.
   */
  onShutdown(end: () => void): () => void;
}

/** A WebSocket endpoint (`Upgrade: websocket`) under a mount. */
export interface SocketRoute {
  network: { slug: string };
  /** Key given in the path. */
  pathKey?: string;
  /** Takes over the connection; throws (or rejects with) an AppError to refuse it with that HTTP answer. */
  accept(ctx: SocketContext, socket: Duplex, head: Buffer): void | Promise<void>;
}

/** One public API mounted at `/<prefix>/...` (a chain family's, or the webhook API). */
export interface Mount {
  /** The first path segment: `rpc`, `node`; also the `api` of its usage and request log. */
  prefix: string;
  /** Its interface label on metrics (evm, cometbft, …): a word fixed in code. Default: the prefix. */
  interface?: string;
  /** Whether the mount serves this network (another answers 404 NOT_SUPPORTED_CHAIN). */
  serves(network: Network): boolean;
  /** Also take the key from `Authorization: Bearer <key>`, as Aptos clients send API keys. */
  bearerKey?: boolean;
  /** Request headers browsers may send beyond Content-Type and X-API-KEY (CORS preflight). */
  corsHeaders?: readonly string[];
  /** Path segments after the prefix; undefined answers 404 WRONG_ENDPOINT. */
  match(segments: string[]): RouteMatch | OpenRoute | undefined;
  /** Path segments of an upgrade request; undefined answers 404 WRONG_ENDPOINT. */
  upgrade?(segments: string[]): SocketRoute | undefined;
}

/** Answers who a presented API key acts for (lib/keys/verifier.ts KeyVerifier). */
export interface KeyVerification {
  /**
   * Synchronously when the answer is known; `beforeLookup` runs (and may throw to refuse) before
   * the key is looked up for a key not found valid lately.
   */
  verify(secret: string, beforeLookup?: () => void): Verification | Promise<Verification>;
}

/**
 * The plan allowance per project (lib/gateway/quota.ts QuotaTracker): counted where the calls are
 * served, so that a check waits only when it must first read what the project used.
 */
export interface PlanAllowance {
  /** Throws EXCEEDED_QUOTA_LIMIT when the allowance is used up, unless overage applies; a promise only when it must read the usage first. */
  check(projectId: string, plan: Plan, overage: boolean): Promise<void> | undefined;
  /** Throws EXCEEDED_QUOTA_LIMIT when `cu` more would pass the allowance, unless overage applies. */
  affords(projectId: string, plan: Plan, overage: boolean, cu: number): void;
  /** Counts CU a served call cost. */
  add(projectId: string, cu: number): void;
  /** The X-RateLimit-* headers of an answer to the project; undefined for a plan without a fixed allowance. */
  headers(projectId: string, plan: Plan): Readonly<Record<string, string>> | undefined;
}

/** Where metered calls go (lib/usage/meter.ts UsageMeter); `now`: wall-clock ms of the call. */
export interface UsageRecorder {
  record(sample: UsageSample, now?: number): void;
}

/** Where finished requests are logged for the console (lib/usage/request-log.ts RequestLog); it copies what it keeps. */
export interface RequestRecorder {
  record(entry: RequestLogEntry): void;
}

/**
 * What a gateway is handed (createGateway): the key verifier (authenticate), the plan allowance
 * (charge, and the headers of every answer to a known key), the CU-per-second limit (taken per
 * call as the endpoint runs), the usage meter (each call) and the request log (each request).
 */
export interface GatewayParts {
  keys: KeyVerification;
  limiter: ThroughputLimiter;
  allowance: PlanAllowance;
  meter: UsageRecorder;
  /** None: requests are not logged. */
  requestLog?: RequestRecorder;
}
