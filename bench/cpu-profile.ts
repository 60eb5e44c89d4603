/** Summaries of the CPU profiles (.cpuprofile) that `node --cpu-prof` writes. */
import { readFileSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs, CLOCK_MONOTONIC on Linux (the clock of process.hrtime), like the sample times. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Now in µs of the monotonic clock that V8 stamps profile samples with (Linux). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface ProfileFunction {
  /** "name origin:line" */
  name: string;
  /** Project file, node_modules package, "node internals", "(garbage collector)", ... */
  origin: string;
  selfMs: number;
  /** Time with this function anywhere on the stack. */
  totalMs: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  /** Every function seen, busiest first by self time. */
  functions: ProfileFunction[];
  /** Self time by origin, busiest first. */
  origins: { origin: string; selfMs: number }[];
}

function originOf(url: string, name: string, root: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const file = url.replace(/^file:\/\//, "");
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (nm) return `node_modules/${nm[1]}`;
  return file.startsWith(root) ? path.relative(root, file) : file;
}

/**
 * Self and inclusive time per function and self time per origin, from a .cpuprofile file;
 * only the samples inside `windows` ([start, end] in monotonicUs()) when given.
 */
export function summarizeCpuProfile(file: string, root = process.cwd(), windows?: Array<[number, number]>): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const functions = new Map<string, ProfileFunction>();
  const fnOf = (n: ProfileNode): ProfileFunction => {
    const { functionName, url, lineNumber } = n.callFrame;
    const origin = originOf(url, functionName, root);
    // Files run through tsx are transpiled: their line numbers don't match the source, so leave them out.
    const line = /\.[cm]?tsx?$/.test(origin) ? "" : `:${lineNumber + 1}`;
    const name = `${functionName || "(anonymous)"}${url ? ` ${origin}${line}` : ""}`;
    let f = functions.get(name);
    if (!f) {
      f = { name, origin, selfMs: 0, totalMs: 0 };
      functions.set(name, f);
    }
    return f;
  };
  let totalUs = 0;
  let idleUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (!node) continue;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    totalUs += dt;
    if (node.callFrame.functionName === "(idle)") {
      idleUs += dt;
      continue;
    }
    fnOf(node).selfMs += dt / 1000;
    const seen = new Set<ProfileFunction>();
    for (let cur: number | undefined = node.id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n) break;
      const f = fnOf(n);
      if (seen.has(f)) continue; // recursion: count once
      seen.add(f);
      f.totalMs += dt / 1000;
    }
  }
  const origins = new Map<string, number>();
  for (const f of functions.values()) origins.set(f.origin, (origins.get(f.origin) ?? 0) + f.selfMs);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    functions: [...functions.values()].sort((a, b) => b.selfMs - a.selfMs),
    origins: [...origins.entries()].map(([origin, selfMs]) => ({ origin, selfMs })).sort((a, b) => b.selfMs - a.selfMs),
  };
}

/** True for functions defined in the project's own files (not node_modules, not Node's). */
export function isProjectFunction(f: ProfileFunction): boolean {
  return /\.(?:[cm]?[jt]sx?)$/.test(f.origin) && !f.origin.startsWith("/") && !f.origin.startsWith("node_modules/");
}
