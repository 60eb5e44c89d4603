/**
 * What a benchmark ran on and what it used: the machine, CPU time per group of processes and
 * memory per process (Linux /proc), and a wait for the other users of a shared machine to go quiet.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { processAndDescendants } from "./processes";

export function machineInfo(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? "unknown CPU";
  const memGiB = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `${model}, ${cpus.length} cores, ${memGiB} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()} ${os.arch()}`;
}

// CPU accounting (Linux /proc): who used the cores during a run.

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function systemTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu user nice system idle iowait irq softirq steal (guest time is already in user)
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

/** [user, system] clock ticks of a process (all its threads). */
function processTicks(pid: number): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14 and 15 (utime, stime); f[0] is field 3 (state)
    return [Number(f[11]) || 0, Number(f[12]) || 0];
  } catch {
    return [0, 0];
  }
}

export interface CpuUsage {
  wallSec: number;
  /** Cores busy on the whole machine (average over the run). */
  systemCores: number;
  /** Cores used by each named group of processes (user + system). */
  groups: Record<string, number>;
  /** The system (kernel) part of `groups`. */
  groupsSystem: Record<string, number>;
  /** Cores used by processes outside this bench (other users of the machine): noise. */
  otherCores: number;
}

/**
 * Starts counting CPU time; the returned function stops and reports it. `groups` name sets of
 * pids (looked up at both ends); everything descending from the bench process counts as ours,
 * the rest of the machine's busy time as "other". Undefined when /proc is not available.
 */
export function startCpuAccounting(groups: Record<string, () => number[]>): () => CpuUsage | undefined {
  const ours = () => processAndDescendants(process.pid);
  const snapshot = () => {
    const pids = new Set<number>(ours());
    const named = Object.fromEntries(Object.entries(groups).map(([name, get]) => [name, get()]));
    for (const list of Object.values(named)) for (const p of list) pids.add(p);
    const ticks = new Map<number, [number, number]>();
    for (const p of pids) ticks.set(p, processTicks(p));
    return { at: performance.now(), system: systemTicks(), ticks, named };
  };
  const before = snapshot();
  return () => {
    const after = snapshot();
    if (!before.system || !after.system) return undefined;
    const hz = ticksPerSecond();
    const wallSec = (after.at - before.at) / 1000;
    // A process born during the run counts from zero; one that ended is lost (both rare here).
    const used = (pid: number, part?: 0 | 1) => {
      const a = after.ticks.get(pid) ?? [0, 0];
      const b = before.ticks.get(pid) ?? [0, 0];
      return part === undefined ? Math.max(0, a[0] + a[1] - b[0] - b[1]) : Math.max(0, a[part] - b[part]);
    };
    const cores = (ticks: number) => ticks / hz / wallSec;
    const groupCores: Record<string, number> = {};
    const groupsSystem: Record<string, number> = {};
    for (const [name, pids] of Object.entries(after.named)) {
      groupCores[name] = cores(pids.reduce((sum, p) => sum + used(p), 0));
      groupsSystem[name] = cores(pids.reduce((sum, p) => sum + used(p, 1), 0));
    }
    const oursTicks = [...after.ticks.keys()].reduce((sum, p) => sum + used(p), 0);
    const systemBusy = after.system.busy - before.system.busy;
    return {
      wallSec,
      systemCores: cores(systemBusy),
      groups: groupCores,
      groupsSystem,
      otherCores: Math.max(0, cores(systemBusy - oursTicks)),
    };
  };
}

export interface Memory {
  /** Resident set size now, MiB. */
  rssMiB: number;
  /** Peak resident set size, MiB. */
  hwmMiB: number;
}

/** VmRSS and VmHWM from /proc/<pid>/status; undefined when not available (not Linux, gone). */
export function memoryOf(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? NaN);
    const rss = kb("VmRSS");
    if (!Number.isFinite(rss)) return undefined;
    return { rssMiB: rss / 1024, hwmMiB: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * On a shared machine, waits (up to `maxWaitSec`) until processes outside this bench use less
 * than `maxOtherCores` over a 1 s window. Returns the last reading (cores used by others).
 */
export async function waitForQuiet(maxOtherCores: number, maxWaitSec: number, onWait?: (others: number) => void): Promise<number | undefined> {
  const deadline = Date.now() + maxWaitSec * 1000;
  let waited = false;
  for (;;) {
    const stop = startCpuAccounting({});
    await sleep(1000);
    const others = stop()?.otherCores;
    if (others === undefined || others < maxOtherCores || Date.now() >= deadline) return others;
    if (!waited) onWait?.(others);
    waited = true;
  }
}

/**
 * Pins processes (all their threads, and the threads they start later) to one CPU with taskset;
 * false when that is not possible here (no taskset, one CPU, not Linux).
 */
export function pinToCpu(pids: number[], cpu: number): boolean {
  if (process.platform !== "linux" || os.availableParallelism() <= cpu) return false;
  try {
    for (const pid of pids) execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
