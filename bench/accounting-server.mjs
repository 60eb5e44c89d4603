// Runs bench/accounting-server.ts as `npm start` runs the server: compiled into one ES module
// with esbuild (bin/start.mjs), then with plain Node, never through a TypeScript loader.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compileServer } from "../bin/start.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = await compileServer(path.join(root, "bench", "accounting-server.ts"), path.join(root, ".blockgate", "accounting-server.mjs"));
process.chdir(root);
await import(pathToFileURL(outfile).href);
