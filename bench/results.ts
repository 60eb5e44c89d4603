/** bench/RESULTS.md: which code was measured, tables and number formats, sections newest first. */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

export const RESULTS_FILE = path.join("bench", "RESULTS.md");

/**
 * Which code was measured: the git commit (if any; "+ changes" when the tree is dirty) and a
 * short hash of the given source files or directories, which tells runs of an uncommitted tree apart.
 */
export function codeVersion(paths: string[], root = process.cwd()): string {
  const files: string[] = [];
  const walk = (p: string) => {
    const full = path.join(root, p);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) for (const e of readdirSync(full).sort()) walk(path.join(p, e));
    else if (/\.[cm]?[jt]sx?$/.test(p) && !/\.test\.[jt]sx?$/.test(p)) files.push(p);
  };
  for (const p of paths) walk(p);
  const hash = createHash("sha256");
  for (const f of files) hash.update(f).update("\0").update(readFileSync(path.join(root, f))).update("\0");
  let git = "no git commit";
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() !== "";
    git = `git ${head}${dirty ? " + changes" : ""}`;
  } catch {
    // not a repository, or no commit yet
  }
  return `${git}; sources ${paths.join(", ")} sha256 ${hash.digest("hex").slice(0, 12)}`;
}

export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export const fmt = {
  ms: (v: number) => (Number.isFinite(v) ? v.toFixed(3) : "n/a"),
  rps: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a"),
  ratio: (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "n/a"),
  cores: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : "n/a"),
  mib: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${v.toFixed(1)} MiB` : "n/a"),
};

const RESULTS_HEADER = `# Benchmark results

Written by \`npm run bench -- <name>\` (bench/run.ts); one section per run, newest first.
`;

/** Puts a section ("## ..." and its body) above the earlier ones in bench/RESULTS.md. */
export async function prependResultsSection(section: string, file = RESULTS_FILE): Promise<void> {
  const existing = existsSync(file) ? await fs.readFile(file, "utf8") : RESULTS_HEADER;
  const at = existing.search(/^## /m);
  const head = (at === -1 ? existing : existing.slice(0, at)).trimEnd();
  const rest = at === -1 ? "" : existing.slice(at).trimEnd();
  const text = `${head}\n\n${section.trim()}\n${rest ? `\n${rest}\n` : ""}`;
  await fs.writeFile(file, text, "utf8");
}
