/**
 * One server process with two gateways, for `npm run bench -- usage`: the service as
 * `npm start -- --api-only` runs it on PORT (usage metering, plan limits and the request log as
 * configured), and a second HTTP server of the same process on OFF_PORT with all three off.
 * Loading the two ports in turn compares accounting on and off in the same process (the same
 * compiled code, the same heap) at nearly the same moment of the machine.
 */
import { startService } from "@/lib/runtime";
import { startHttpServer } from "@/lib/server";
import { exitOnSignal, runMain } from "./serve";

async function main(): Promise<void> {
  const offPort = Number(process.env.OFF_PORT);
  if (!Number.isInteger(offPort) || offPort <= 0) throw new Error("OFF_PORT must be a port number");
  const service = await startService({ withNext: false });
  const off = await startHttpServer({ host: "127.0.0.1", port: offPort, meter: service.services.meter, metering: false });
  exitOnSignal(async () => {
    await off.close();
    await service.stop();
  });
}

runMain(main);
