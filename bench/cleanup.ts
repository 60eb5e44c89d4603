/**
 * Cleanup for `npm run bench -- <name>`: a stack of undo steps (servers, databases, temporary
 * directories, load runs), run newest first on success, failure, SIGINT or SIGTERM.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

function errorText(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

type CleanupStep = { name: string; fn: () => Promise<void> | void };

class CleanupStack {
  private steps: CleanupStep[] = [];
  private running: Promise<void> | undefined;

  /** Registers an undo step; returns a function that unregisters it (when it was done by hand). */
  add(name: string, fn: () => Promise<void> | void): () => void {
    const step = { name, fn };
    this.steps.push(step);
    return () => {
      this.steps = this.steps.filter((s) => s !== step);
    };
  }

  /** Runs every registered step, newest first; a failing step does not stop the others. */
  run(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        try {
          await step.fn();
        } catch (e) {
          console.error(`[bench] cleanup "${step.name}" failed: ${errorText(e)}`);
        }
      }
    })();
    return this.running;
  }
}

export const cleanup = new CleanupStack();

/**
 * Runs a benchmark with cleanup guaranteed: on return, on throw, and on SIGINT/SIGTERM (the
 * first signal cleans up and exits; a signal arriving more than 2 s later forces the exit, so a
 * relayed duplicate of the same Ctrl-C does not cut the cleanup short).
 */
export async function runWithCleanup(main: () => Promise<number>): Promise<never> {
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = signal === "SIGINT" ? 130 : 143;
    if (firstSignalAt === 0) {
      firstSignalAt = Date.now();
      console.error(`\n[bench] ${signal}: cleaning up…`);
      void cleanup.run().finally(() => process.exit(code));
    } else if (Date.now() - firstSignalAt > 2000) {
      console.error(`[bench] ${signal} again: exiting without waiting for the cleanup`);
      process.exit(code);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let code = 1;
  try {
    code = await main();
  } catch (e) {
    console.error(`[bench] failed: ${errorText(e)}`);
    code = 1;
  }
  await cleanup.run();
  process.exit(code);
}

/** A fresh temporary directory, removed by the cleanup. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanup.add(`remove ${dir}`, () => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}
