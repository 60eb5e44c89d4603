import path from "node:path";
import { defineConfig } from "vitest/config";

// `npm run test:faults`: fault injection against the real service (bin/start.mjs in a child
// process, its own embedded PostgreSQL and devnets). One file at a time: each kills processes.
export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["e2e/faults/**/*.fault.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
  },
});
