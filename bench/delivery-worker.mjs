// Runs bench/delivery-worker.ts as `npm start` runs the server: compiled into one ES module
// with esbuild (bin/start.mjs), then with plain Node, never through a TypeScript loader.
import { runServer } from "../bin/start.mjs";

await runServer("bench/delivery-worker.ts");
