import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig, devices } from "@playwright/test";

/**
 * E2E tests run the real service (`bin/start.ts`: production build, embedded PostgreSQL in a
 * throwaway directory) on free ports, and drive it with Chromium. The config is evaluated in
 * every worker too, so the ports and directory are chosen once and passed down in the environment.
 */
function freePort(): string {
  return execFileSync(process.execPath, [
    "-e",
    "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})",
  ]).toString();
}

process.env.E2E_PORT ??= freePort();
process.env.E2E_PG_PORT ??= freePort();
process.env.E2E_DATA_DIR ??= mkdtempSync(path.join(os.tmpdir(), "blockgate-e2e-"));
const baseURL = `http://127.0.0.1:${process.env.E2E_PORT}`;

// Debian's Chromium where present (this project's CI machines); Playwright's own browser elsewhere.
const systemChromium = "/usr/bin/chromium";
const launchOptions = existsSync(systemChromium)
  ? {
      executablePath: systemChromium,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    }
  : {};

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions,
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], launchOptions } }],
  webServer: {
    command: `${JSON.stringify(process.execPath)} bin/start.mjs`,
    url: `${baseURL}/api/ready`,
    timeout: 600_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    env: {
      PORT: process.env.E2E_PORT,
      HOST: "127.0.0.1",
      EMBEDDED_PG_PORT: process.env.E2E_PG_PORT,
      DATA_DIR: process.env.E2E_DATA_DIR,
      DATABASE_URL: "",
      PUBLIC_URL: baseURL,
      NEXT_TELEMETRY_DISABLED: "1",
      // Every spec signs up from 127.0.0.1: more than one address's default 30 an hour.
      SIGN_UP_PER_ADDRESS_PER_HOUR: "1000",
    },
  },
});
