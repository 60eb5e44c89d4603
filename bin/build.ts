import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const SOURCES = ["app", "components", "lib", "public", "prisma/schema.prisma", "next.config.ts", "package-lock.json", "postcss.config.mjs", "tsconfig.json"];
const SKIP = new Set(["node_modules", ".next", "generated"]);
const STAMP = path.join(".next", "blockgate-source.sha256");

function walk(p: string, out: string[]): void {
  if (!existsSync(p)) return;
  const st = statSync(p);
  if (st.isFile()) {
    if (!/\.test\.tsx?$/.test(p)) out.push(`${p}:${st.size}:${st.mtimeMs}`);
    return;
  }
  for (const name of readdirSync(p).sort()) if (!SKIP.has(name)) walk(path.join(p, name), out);
}

/** A fingerprint of everything the console build depends on (paths, sizes, mtimes). */
export function sourceFingerprint(): string {
  const entries: string[] = [];
  for (const s of SOURCES) walk(s, entries);
  return createHash("sha256").update(entries.join("\n")).digest("hex");
}

/** Runs `next build` when there is no build or the sources changed since the last one. */
export function ensureFreshBuild(run: (cmd: string, args: string[]) => number): void {
  const fingerprint = sourceFingerprint();
  const built = existsSync(path.join(".next", "BUILD_ID")) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === fingerprint;
  if (built) return;
  console.log("Building the console (first start or sources changed)…");
  const status = run(process.execPath, [path.join("node_modules", "next", "dist", "bin", "next"), "build"]);
  if (status !== 0) throw new Error("next build failed");
  writeFileSync(STAMP, fingerprint);
}

// `npm run build`: builds the console as `npm start` would (same stamp), so a start after it does
// not build again (the image build runs it once).
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve("bin/build.ts")) {
  ensureFreshBuild((cmd, args) => spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1);
}
