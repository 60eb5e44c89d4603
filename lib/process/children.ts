/**
 * Child processes that must not outlive us: anvil devnets and embedded PostgreSQL. Each runs under a
 * small /bin/sh wrapper that holds a pipe from this process on its stdin: when this process dies,
 * however it dies (kill -9 included), the pipe closes and the wrapper stops the child with its
 * death signal. SIGTERM and SIGINT sent to the wrapper are passed on, so the caller stops the child
 * as if it were its own. Helpers to find and stop a child an earlier run left behind are here too.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";

// $1: pid file ("" for none), $2: the signal to send when our pipe closes, then the command.
// Fd 3 keeps our pipe: a background list's stdin is /dev/null in a non-interactive shell.
const WRAPPER = `exec 3<&0
pidfile="$1"; sig="$2"; shift 2
"$@" </dev/null 3<&- &
child=$!
if [ -n "$pidfile" ]; then echo "$child" > "$pidfile"; fi
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
( while read -r _ <&3; do :; done; kill "-$sig" "$child" 2>/dev/null ) &
watcher=$!
exec 3<&-
wait "$child"; status=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
kill "$watcher" 2>/dev/null
exit "$status"`;

export interface TiedOptions extends Omit<SpawnOptions, "stdio"> {
  /** Sent to the child when this process dies (default SIGTERM). */
  deathSignal?: "TERM" | "INT" | "KILL";
  /** Where the wrapper writes the child's own pid (see stopLeftover). */
  pidFile?: string;
  /** stdout and stderr of the child: "pipe" (default) or "ignore". */
  output?: "pipe" | "ignore";
}

/**
 * Spawns `file args` tied to this process's life. The returned ChildProcess is the wrapper's: its
 * kill("SIGTERM" | "SIGINT") reaches the child, and its exit follows the child's (a signal death
 * shows as exit code 128 + signal).
 */
export function spawnTied(file: string, args: readonly string[], options: TiedOptions = {}): ChildProcess {
  const { deathSignal = "TERM", pidFile = "", output = "pipe", ...rest } = options;
  const out = output === "pipe" ? "pipe" : "ignore";
  // Its own process group, so that killTied can take the wrapper and the child down together.
  return spawn("/bin/sh", ["-c", WRAPPER, "blockgate-tied", pidFile, deathSignal, file, ...args], { ...rest, detached: true, stdio: ["pipe", out, out] });
}

/** SIGKILL for a tied child and its wrapper at once (the wrapper alone could not pass it on). */
export function killTied(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The parent pid and command line of a process, or null when it cannot be read. */
export function processInfo(pid: number): { ppid: number; command: string } | null {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces, so split after ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "", 10);
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    return { ppid, command };
  } catch {
    // No procfs (macOS): ask ps.
    try {
      const out = execFileSync("ps", ["-o", "ppid=,args=", "-p", String(pid)], { encoding: "utf8" }).trim();
      const match = /^(\d+)\s+(.*)$/.exec(out);
      return match ? { ppid: Number(match[1]), command: match[2] ?? "" } : null;
    } catch {
      return null;
    }
  }
}

/**
 * Stops a process an earlier run left behind, named by its pid file, when it is still alive and its
 * command line matches (a pid reused by another program is left alone). SIGTERM first, SIGKILL
 * after `graceMs`. Returns the pid stopped, or null when there was none. The pid file is removed.
 */
export async function stopLeftover(pidFile: string, matches: (command: string) => boolean, graceMs = 10_000): Promise<number | null> {
  let pid: number;
  try {
    pid = Number.parseInt(await fs.readFile(pidFile, "utf8"), 10);
  } catch {
    return null;
  }
  await fs.rm(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null;
  const info = processInfo(pid);
  if (!info || !matches(info.command)) return null;
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && processInfo(pid) !== null) {
    if (Date.now() > deadline) {
      process.kill(pid, "SIGKILL");
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return pid;
}

/**
 * Ties an already running process (one spawned directly, whose start-up errors the caller reads
 * itself) to this process's life: a watcher sends it `signal` when this process dies. stop() ends
 * the watcher (call it once the process has exited).
 */
export function watchOver(pid: number, signal: "TERM" | "INT"): { stop(): void } {
  const watcher = spawn("/bin/sh", ["-c", `while read -r _; do :; done; kill -${signal} ${pid} 2>/dev/null`], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  watcher.unref();
  // Our end of the pipe must not keep this process running either.
  (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return { stop: () => watcher.kill("SIGKILL") };
}

export interface SuperviseOptions {
  /** Starts the process again; resolves once it is ready, rejects when this attempt failed. */
  restart: () => Promise<ChildProcess>;
  /** First delay before a restart, doubled after each failed attempt up to maxMs, and back to minMs once one succeeds. */
  minMs: number;
  maxMs: number;
  /** The process exited without being asked to; a restart follows in `delayMs`. */
  onExit?: (code: number | null, signal: NodeJS.Signals | null, delayMs: number) => void;
  /** A restart attempt failed; the next one follows in `delayMs`. */
  onRestartFailed?: (error: unknown, delayMs: number, attempt: number) => void;
  onRestarted?: (child: ChildProcess, attempts: number) => void;
}

export interface Supervised {
  /** The process running now (the last one started). */
  current(): ChildProcess;
  /** Stops supervising, waits for a restart in progress, then stops the process with `stopChild`. */
  stop(stopChild: (child: ChildProcess) => Promise<void>): Promise<void>;
}

/**
 * Keeps a child process running: when it exits without stop(), it is started again with `restart`,
 * after a delay that doubles while attempts keep failing (a crashed server may hold its port or
 * shared memory for a moment).
 */
export function supervise(first: ChildProcess, options: SuperviseOptions): Supervised {
  let current = first;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let attempt: Promise<ChildProcess | undefined> | undefined;

  const watch = (child: ChildProcess) => {
    child.once("exit", (code, signal) => {
      if (stopped || child !== current) return;
      options.onExit?.(code, signal, options.minMs);
      schedule(options.minMs, 1);
    });
  };
  const schedule = (delayMs: number, attempts: number) => {
    timer = setTimeout(() => {
      timer = undefined;
      if (stopped) return;
      attempt = options.restart().then(
        (child) => {
          attempt = undefined;
          if (stopped) return child;
          current = child;
          watch(child);
          options.onRestarted?.(child, attempts);
          return undefined;
        },
        (error: unknown) => {
          attempt = undefined;
          if (stopped) return undefined;
          const next = Math.min(options.maxMs, delayMs * 2);
          options.onRestartFailed?.(error, next, attempts);
          schedule(next, attempts + 1);
          return undefined;
        },
      );
    }, delayMs);
    timer.unref();
  };
  watch(first);

  return {
    current: () => current,
    async stop(stopChild) {
      stopped = true;
      if (timer) clearTimeout(timer);
      // A restart that completes now hands its process back here, to be stopped too.
      const late = await attempt;
      await Promise.all([stopChild(current), late ? stopChild(late) : undefined]);
    },
  };
}
