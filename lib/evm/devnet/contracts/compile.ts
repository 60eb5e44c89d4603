// Compiles the devnet contracts with solc-js and renders artifacts.ts. Used by
// scripts/compile-contracts.ts (npm run contracts) and by the test that keeps the committed
// artifacts identical to the sources. solc is a devDependency: import this module only from
// tooling and tests, never from the app.
import { readFile } from "node:fs/promises";
import path from "node:path";

export const CONTRACTS_DIR = path.resolve(import.meta.dirname);
export const ARTIFACTS_PATH = path.join(CONTRACTS_DIR, "artifacts.ts");

/** Contract name → its source file; each file holds one contract of the same name. */
export const CONTRACT_SOURCES = { BlockgateToken: "BlockgateToken.sol", Emitter: "Emitter.sol" } as const;

/** Fixed compiler settings: same sources + same solc version = byte-identical artifacts. */
export const EVM_VERSION = "cancun";
const SETTINGS = {
  evmVersion: EVM_VERSION,
  optimizer: { enabled: true, runs: 200 },
  // No source hash in the bytecode: comment or whitespace edits do not change the artifacts.
  metadata: { bytecodeHash: "none" },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
} as const;

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

interface Solc {
  compile(input: string): string;
  version(): string;
}

/** solc-js, or null when it is not installed (production install without devDependencies). */
export async function loadSolc(): Promise<Solc | null> {
  try {
    const mod = (await import("solc")) as unknown as { default?: Solc } & Solc;
    return mod.default ?? mod;
  } catch {
    return null;
  }
}

/** Compiles the sources and returns the full text of artifacts.ts. Throws on any compiler error. */
export async function renderArtifacts(solc: Solc): Promise<string> {
  const sources: Record<string, { content: string }> = {};
  for (const file of Object.values(CONTRACT_SOURCES)) {
    sources[file] = { content: await readFile(path.join(CONTRACTS_DIR, file), "utf8") };
  }
  const input = { language: "Solidity", sources, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity !== "info");
  if (problems.length > 0) {
    // Warnings count too: the committed artifacts come from warning-free sources.
    throw new Error(`solc reported problems:\n${problems.map((e) => e.formattedMessage).join("\n")}`);
  }

  const version = solc.version();
  let text =
    `// GENERATED FILE, DO NOT EDIT. Regenerate with \`npm run contracts\` (scripts/compile-contracts.ts)\n` +
    `// from ${Object.values(CONTRACT_SOURCES).join(", ")} in this directory.\n` +
    `// solc ${version}, evmVersion ${EVM_VERSION}, optimizer 200 runs, bytecodeHash none.\n`;
  for (const [name, file] of Object.entries(CONTRACT_SOURCES)) {
    const contract = output.contracts?.[file]?.[name];
    if (!contract || !contract.evm.bytecode.object) throw new Error(`solc produced no bytecode for ${name}`);
    text +=
      `\nexport const ${name} = {\n` +
      `  abi: ${JSON.stringify(contract.abi, null, 2).replace(/\n/g, "\n  ")} as const,\n` +
      `  bytecode: "0x${contract.evm.bytecode.object}" as \`0x\${string}\`,\n` +
      `};\n`;
  }
  return text;
}
