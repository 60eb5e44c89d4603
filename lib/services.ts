/**
 * The services of a process, built in one place (createServices) by the composition root,
 * lib/runtime.ts startService, which hands them to what it starts: the HTTP server and its gateway,
 * the webhook delivery worker, the families' workers. Code reached from Next.js route handlers and
 * server actions cannot be handed parameters: it asks services(), which answers the set the root
 * installed (kept per process, lib/per-process.ts, since Next.js bundles that code apart from the
 * custom server), or, in a process that did not go through startService (tests, the admin tool), a
 * set built from the configuration on first use.
 */
import { getEnv, type Env } from "@/lib/env";
import { EvmBackends } from "@/lib/evm/backends";
import { KeyVerifier } from "@/lib/keys/verifier";
import { SharedLimits } from "@/lib/limits/shared";
import { componentLogger } from "@/lib/log";
import { perProcess } from "@/lib/per-process";
import { minuteRetentionMs, UsageMeter } from "@/lib/usage/meter";
import { RequestLog } from "@/lib/usage/request-log";
import { ChainSources } from "@/lib/webhooks/engine/source";

export interface Services {
  /** Who a presented API key acts for; the console's resets and revocations make it forget a key at once. */
  keyVerifier: KeyVerifier;
  /** Usage of the gateway's calls, webhook deliveries and the messages the console queues. */
  meter: UsageMeter;
  /** The gateway's recent requests, per project. */
  requestLog: RequestLog;
  /** Where EVM networks' calls go (upstreams, or devnets once the EVM family's worker configured them). */
  evm: EvmBackends;
  /** The webhook chain source of each network. */
  chainSources: ChainSources;
  /** What the limits every web process holds together are shared through (Redis; local until given one). */
  limits: SharedLimits;
}

/** `limits`: the process's connection to the shared limits (the composition root's); default local. */
export function createServices(env: Env, limits = new SharedLimits()): Services {
  return {
    limits,
    keyVerifier: new KeyVerifier({ cacheTtlMs: env.KEY_CACHE_TTL_MS }),
    meter: new UsageMeter(componentLogger("usage"), minuteRetentionMs(env)),
    requestLog: new RequestLog(),
    evm: new EvmBackends(),
    chainSources: new ChainSources(),
  };
}

const current = perProcess("services", (): { services?: Services } => ({}));

/** Makes `built` the process's services, those services() answers (the composition root's). */
export function installServices(built: Services): Services {
  current.services = built;
  return built;
}

/** The process's services: those installed by the composition root, else built on first use. */
export function services(): Services {
  current.services ??= createServices(getEnv());
  return current.services;
}

/**
 * Per-process limits of a module (the console's throttles, reached from Next.js; the WebSocket's
 * caps): `make` builds them on the process's SharedLimits at first use, kept per process
 * (lib/per-process.ts) under `name`, whichever bundle asks; made again for other shared limits
 * (services installed anew, or a gateway handed its own).
 */
export function sharedLimits<T extends object>(name: string, make: (limits: SharedLimits) => T): (limits?: SharedLimits) => T {
  const made = perProcess(name, () => new WeakMap<SharedLimits, T>());
  return (limits = services().limits) => {
    let held = made.get(limits);
    if (!held) made.set(limits, (held = make(limits)));
    return held;
  };
}
