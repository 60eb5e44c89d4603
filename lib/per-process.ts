/**
 * The one module-level handle of the process, and why there is one: Next.js bundles route handlers
 * and server actions apart from the custom server (lib/server.ts) and from each other, yet runs them
 * in the same process. Each bundle has its own copy of every module, so a module's top-level
 * variables exist once per bundle; globalThis exists once per process. What must be one per process
 * is kept here, under one name, each part under the name of the module that owns it:
 * - the services the composition root builds (lib/services.ts: the key verifier, so a key reset in
 *   the console applies to the gateway at once; the meter; the request log; the EVM backends; the
 *   webhook chain sources), which code reached from Next.js cannot be handed as parameters;
 * - per-process state of leaf modules that both sides use: the configuration read (lib/env.ts), the
 *   root logger (lib/log.ts), the database pools and outage (lib/db/*), the network catalog
 *   (lib/networks.ts), the mail transport, next-auth's options and the sign-in and sign-up limits
 *   (lib/auth/*), which must count once per process whichever bundle a request reaches, whether
 *   traces are recorded (lib/tracing.ts: the console's queued messages get spans as the server's do),
 *   and the metrics registry (lib/metrics), which what either side measures counts into.
 * Nothing else keeps state on globalThis.
 */
const shared = ((globalThis as { __blockgate?: Map<string, unknown> }).__blockgate ??= new Map<string, unknown>());

/**
 * The process's part named `name`, made by `create` the first time any bundle asks. Called once at a
 * module's top level (the part is an object the module then changes), so no request pays a lookup.
 */
export function perProcess<T extends object>(name: string, create: () => T): T {
  let part = shared.get(name) as T | undefined;
  if (part === undefined) {
    part = create();
    shared.set(name, part);
  }
  return part;
}
