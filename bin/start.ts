/**
 * `npm start` (and `npm run dev` with --dev): builds the console when its build is missing or
 * stale, then starts the whole service in this process and shuts it down in order on
 * SIGINT/SIGTERM: GET /readyz 503 while it keeps serving for DRAIN_MS, then the rest, within
 * shutdownBoundMs (10 s unless DRAIN_MS is over 5 s). `--api-only` serves the public API without
 * the console.
 */
import { spawnSync } from "node:child_process";
import { ensureFreshBuild } from "./build";
import { debugSettings, loadEnv, prepareNextEnv } from "@/lib/env";
import { shutdownBoundMs, startService } from "@/lib/runtime";
import { describeUrlPolicy } from "@/lib/webhooks/url-guard";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: npm start [-- --api-only]    (npm run dev for hot reload)
  --api-only   serve the public API (/rpc, /node, /v1) without the console
Configuration comes from environment variables or .env; see .env.example.`);
  process.exit(0);
}

const dev = process.argv.includes("--dev");
const apiOnly = process.argv.includes("--api-only");
prepareNextEnv(dev);

async function main() {
  // Configuration first: a bad value stops start-up before a build is spent on it.
  const env = loadEnv();
  if (!dev && !apiOnly && env.ROLE !== "worker") ensureFreshBuild((cmd, args) => spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1);
  const service = await startService({ env, dev, withNext: !apiOnly });
  if (service.url) {
    const shown = service.env.PUBLIC_URL;
    console.log(`\nBlockgate is running (${dev ? "development" : "production build"}, role ${service.env.ROLE}).`);
    if (!apiOnly) console.log(`  Console:     ${shown}`);
    console.log(`  Public API:  ${shown}/node/<network>, ${shown}/rpc/<network>, ${shown}/v1/...`);
    console.log(`  Database:    ${service.embeddedDatabase ? "embedded PostgreSQL" : "external PostgreSQL (DATABASE_URL)"}`);
    console.log(`  Webhooks:    ${describeUrlPolicy(service.env)}\n`);
  } else {
    const probes = service.workerHttpUrl ? `; probes at ${service.workerHttpUrl}/healthz and /readyz` : "";
    console.log(`Blockgate worker is running (role ${service.env.ROLE})${probes}.`);
  }
  let shuttingDown = false;
  const shutdown = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log(`\n${signal}: shutting down…`);
    const bound = shutdownBoundMs(service.env);
    const force = setTimeout(() => {
      console.error(`Shutdown took longer than ${bound / 1000} s; exiting.`);
      process.exit(1);
    }, bound);
    force.unref();
    service
      .stop()
      .then(() => {
        console.log("Stopped.");
        process.exit(0);
      })
      .catch((e: unknown) => {
        console.error(e);
        process.exit(1);
      });
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((e: unknown) => {
  // Start-up failures (bad configuration, port in use, failed build) are explained by their
  // message; the stack is noise for the person reading it unless they ask for it.
  console.error(e instanceof Error && !debugSettings().stacks ? `Blockgate could not start: ${e.message}` : e);
  process.exit(1);
});
