/** What the processes a benchmark starts share (bench/accounting-server.ts, cluster-server.ts, delivery-worker.ts). */

/** Runs `stop` once at the first SIGTERM or SIGINT, then exits: 0 when it succeeded, 1 (saying why) when not. */
export function exitOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(e);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** Runs the process's `main`, exiting 1 (saying why) when it fails to start. */
export function runMain(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
