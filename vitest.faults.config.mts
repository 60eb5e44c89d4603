import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * `npm run test:faults`: the fault-injection suite (e2e/faults/*.fault.ts). Real processes and
 * real failures: hostile bodies, misbehaving upstream nodes, a server killed with SIGKILL and
 * started again, a noisy neighbour. Files run one at a time: each loads the machine on purpose.
 */
export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["e2e/faults/**/*.fault.ts"],
    globalSetup: ["lib/testing/global-setup.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
    execArgv: ["--expose-gc"],
  },
});
