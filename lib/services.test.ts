/**
 * What Next.js does to the modules it bundles: route handlers and server actions get copies of
 * lib/ of their own, in the process the custom server runs in. The process's services and the
 * per-process state of leaf modules must be the same objects whichever copy asks.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { connectTestDatabase } from "@/lib/testing/harness";

beforeAll(async () => {
  await connectTestDatabase();
});

describe("the process's services", () => {
  it("are the same to a second copy of the modules, as a Next.js bundle has, and so are the configuration and the logger", async () => {
    const server = { services: await import("@/lib/services"), env: await import("@/lib/env"), log: await import("@/lib/log"), verifier: await import("@/lib/keys/verifier") };
    const installed = server.services.installServices(server.services.createServices(server.env.getEnv()));
    vi.resetModules();
    const bundle = { services: await import("@/lib/services"), env: await import("@/lib/env"), log: await import("@/lib/log"), verifier: await import("@/lib/keys/verifier") };
    // A copy indeed: its classes are not the server's.
    expect(bundle.verifier.KeyVerifier).not.toBe(server.verifier.KeyVerifier);
    expect(bundle.services.services()).toBe(installed);
    expect(bundle.env.getEnv()).toBe(server.env.getEnv());
    expect(bundle.log.logger()).toBe(server.log.logger());
  });
});
