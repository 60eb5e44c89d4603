/**
 * A webhook delivery worker process alone, for `npm run bench -- cluster`: what a ROLE=worker
 * process runs for deliveries (lib/webhooks/delivery/worker.ts), against DATABASE_URL, without the
 * chain followers. Prints "delivering" once started; SIGTERM stops it after its attempts in flight.
 */
import { disconnectDb } from "@/lib/db/client";
import { loadEnv, setDatabaseUrl } from "@/lib/env";
import { UsageMeter } from "@/lib/usage/meter";
import { startDelivery } from "@/lib/webhooks/delivery/worker";

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
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void worker
      .stop()
      .then(() => meter.stop())
      .then(() => disconnectDb())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          console.error(e);
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
