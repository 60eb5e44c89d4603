// Compiles the EVM devnet contracts (lib/evm/devnet/contracts/*.sol) with solc-js and writes
// lib/evm/devnet/contracts/artifacts.ts. Run with `npm run contracts`; commit the result.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ARTIFACTS_PATH, loadSolc, renderArtifacts } from "../lib/evm/devnet/contracts/compile";

async function main() {
  const solc = await loadSolc();
  if (!solc) throw new Error("solc is not installed (it is a devDependency: run npm install)");
  const text = await renderArtifacts(solc);
  const before = await readFile(ARTIFACTS_PATH, "utf8").catch(() => null);
  const where = path.relative(process.cwd(), ARTIFACTS_PATH);
  if (before === text) {
    console.log(`${where} is up to date (solc ${solc.version()})`);
    return;
  }
  await writeFile(ARTIFACTS_PATH, text);
  console.log(`wrote ${where} (solc ${solc.version()})`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
