// `npm start`: compiles the server (bin/start.ts and lib/, not the console, which Next.js builds)
// into one ES module with esbuild when its sources changed, then runs it with plain Node.
// Production never runs through a TypeScript loader: that costs CPU on every request.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * A fingerprint of what a compiled server depends on: bin/, lib/, the entry point and the lockfile.
 * @param {string} entry
 */
function fingerprint(entry) {
  /** @type {Array<string | number>} */
  const entries = [];
  /** @param {string} p */
  const walk = (p) => {
    const st = statSync(p);
    if (st.isFile()) return void (/\.tsx?$/.test(p) && !/\.test\.ts$/.test(p) && entries.push(`${p}:${st.size}:${st.mtimeMs}`));
    for (const name of readdirSync(p).sort()) if (name !== "node_modules") walk(path.join(p, name));
  };
  for (const dir of ["bin", "lib"]) walk(path.join(root, dir));
  walk(entry);
  entries.push(readFileSync(path.join(root, "package-lock.json"), "utf8").length);
  return createHash("sha256").update(entries.join("\n")).digest("hex");
}

/**
 * Compiles `entry` (TypeScript, with what it imports from lib/) into the ES module `outfile` with
 * esbuild when its sources changed since the last compilation; returns `outfile`.
 * @param {string} entry
 * @param {string} outfile
 */
export async function compileServer(entry, outfile) {
  const stamp = outfile.replace(/\.mjs$/, ".sha256");
  const hash = fingerprint(entry);
  if (existsSync(outfile) && existsSync(stamp) && readFileSync(stamp, "utf8") === hash) return outfile;
  const result = await build({
    write: false,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: path.join(root, "tsconfig.json"),
    sourcemap: "linked",
    logLevel: "warning",
    // Bundled CommonJS helpers may call require(); give the ES module one.
    banner: { js: "import { createRequire as __bgCreateRequire } from 'node:module'; const require = __bgCreateRequire(import.meta.url);" },
  });
  // Written under temporary names and renamed, so two starts at once never run a half-written file.
  mkdirSync(path.dirname(outfile), { recursive: true });
  for (const file of result.outputFiles) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
  writeFileSync(`${stamp}.${process.pid}.tmp`, hash);
  renameSync(`${stamp}.${process.pid}.tmp`, stamp);
  return outfile;
}

/**
 * Compiles `entry` (a path from the project's root) into .blockgate/<its name>.mjs and runs it
 * from the project's root.
 * @param {string} entry
 */
export async function runServer(entry) {
  const outfile = await compileServer(path.join(root, entry), path.join(root, ".blockgate", `${path.basename(entry, ".ts")}.mjs`));
  process.chdir(root);
  await import(pathToFileURL(outfile).href);
}

// Run as a program (npm start), not imported. `--compile-only` compiles the server and exits: an
// image build (Dockerfile) does it once, so no process compiles at start.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--compile-only")) await compileServer(path.join(root, "bin/start.ts"), path.join(root, ".blockgate", "start.mjs"));
  else await runServer("bin/start.ts");
}
