/**
 * No module of lib/ imports itself through others: a loop makes one side of it run against the
 * other half-loaded (undefined exports at module scope), and ties modules that should stand apart.
 * Type-only imports count too: they tie the modules all the same.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const lib = path.join(root, "lib");

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "generated") sources(file, out);
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".test.ts")) out.push(file);
  }
  return out;
}

/** The file of lib/ an import names, or undefined (a package, or outside lib/). */
function resolve(from: string, specifier: string): string | undefined {
  const base = specifier.startsWith("@/") ? path.join(root, specifier.slice(2)) : specifier.startsWith(".") ? path.resolve(path.dirname(from), specifier) : undefined;
  if (base === undefined || !base.startsWith(lib + path.sep)) return undefined;
  return [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")].find((f) => existsSync(f) && statSync(f).isFile());
}

/** Each file's imports within lib/ (static, dynamic, type-only and re-exports). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(lib)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    graph.set(file, [...new Set(importedFiles.map((i) => resolve(file, i.fileName)).filter((f) => f !== undefined))]);
  }
  return graph;
}

/** One loop per group of files that import each other (Tarjan's strongly connected components), as `a → b → a`. */
function cycles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = stack.splice(stack.indexOf(v));
    if (group.length > 1 || graph.get(v)?.includes(v)) found.push(group);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.map((group) => loopThrough(group, graph).map((f) => path.relative(root, f)).join(" → "));
}

/** A shortest loop from the group's first file back to it, through the group. */
function loopThrough(group: string[], graph: Map<string, string[]>): string[] {
  const start = group[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        const loop = [start];
        for (let at: string | undefined = v; at !== start && at !== undefined; at = previous.get(at)) loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (group.includes(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return group;
}

describe("imports in lib/", () => {
  it("have no loops", () => {
    const graph = importGraph();
    // The walk reads the tree it guards: an empty graph would pass anything.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join(lib, "api", "route.ts"))).toContain(path.join(lib, "validation.ts"));
    expect(cycles(graph)).toEqual([]);
  });
});
