// Runs bench/cluster-server.ts as `npm start` runs the server: compiled into one ES module
// with esbuild (bin/start.mjs), then with plain Node, never through a TypeScript loader.
import { runServer } from "../bin/start.mjs";

await runServer("bench/cluster-server.ts");
