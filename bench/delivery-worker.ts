/**
 * A webhook delivery worker process alone, for `npm run bench -- cluster`: what a ROLE=worker
 * process runs for deliveries (lib/webhooks/delivery/worker.ts), against DATABASE_URL, without the
 * chain followers. Prints "delivering" once started; SIGTERM stops it after its attempts in flight.
 */
import { disconnectDb } from "@/lib/db/client";
import { loadEnv, setDatabaseUrl } from "@/lib/env";
import { UsageMeter } from "@/lib/usage/meter";
import { startDelivery } from "@/lib/webhooks/delivery/worker";
import { exitOnSignal, runMain } from "./serve";

async function main(): Promise<void> {
  const env = loadEnv();
  if (!env.DATABASE_URL) throw new Error("DATABASE_URL must be set");
  setDatabaseUrl(env.DATABASE_URL);
  const meter = new UsageMeter();
  meter.start(env.USAGE_FLUSH_MS);
  const projectIds = process.env.BENCH_PROJECT_IDS?.split(",").filter(Boolean);
  const worker = startDelivery({ meter, ...(projectIds?.length ? { projectIds } : {}) });
  await worker.listening;
  console.log("delivering");
  exitOnSignal(async () => {
    await worker.stop();
    await meter.stop();
    await disconnectDb();
  });
}

runMain(main);
