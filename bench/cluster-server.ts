/**
 * One server process with two gateways, for `npm run bench -- cluster`: the service as
 * `npm start -- --api-only` runs it on PORT with REDIS_URL set (plan limits shared through Redis),
 * and a second HTTP server of the same process on LOCAL_PORT whose limits are held by this
 * process alone (no Redis). Loading the two ports in turn compares the shared limiter with a single
 * process's in the same heap, at nearly the same moment of the machine.
 */
import { RateLimiter } from "@/lib/gateway/limits";
import { QuotaTracker } from "@/lib/gateway/quota";
import { SharedLimits } from "@/lib/limits/shared";
import { startService } from "@/lib/runtime";
import { startHttpServer } from "@/lib/server";
import { exitOnSignal, runMain } from "./serve";

async function main(): Promise<void> {
  const localPort = Number(process.env.LOCAL_PORT);
  if (!Number.isInteger(localPort) || localPort <= 0) throw new Error("LOCAL_PORT must be a port number");
  const service = await startService({ withNext: false });
  const { services, env } = service;
  const alone = new SharedLimits();
  const local = await startHttpServer({
    host: "127.0.0.1",
    port: localPort,
    keys: services.keyVerifier,
    meter: services.meter,
    limiter: new RateLimiter(alone),
    allowance: new QuotaTracker(Date.now, alone),
    limits: alone,
    metering: env.USAGE_METERING === "on",
    requestLog: env.REQUEST_LOG === "on" ? services.requestLog : undefined,
  });
  exitOnSignal(async () => {
    await local.close();
    await service.stop();
  });
}

runMain(main);
