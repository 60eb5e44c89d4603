// Generates the Prisma client after `npm install`, without Prisma's engine download.
// `prisma generate` never runs the native schema engine, but the CLI checks that one exists
// first; pointing it at any existing file lets generation work offline.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = path.join(root, "node_modules", "prisma", "build", "index.js");
if (!existsSync(cli)) process.exit(0); // production install without dev tools: nothing to generate
/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
const result = spawnSync(process.execPath, [cli, "generate"], { cwd: root, env, stdio: "inherit" });
process.exit(result.status ?? 1);
