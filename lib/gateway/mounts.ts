import { nodeMount } from "@/lib/evm/node-endpoint";
import type { Mount } from "./types";

/** Consensus-chain endpoints arrive with their capability (issue 3); until then every path is unknown. */
const rpcMount: Mount = { prefix: "rpc", families: ["consensus"], match: () => undefined };
/** The webhook API arrives with its capability; until then every path is unknown. */
const webhookMount: Mount = { prefix: "v1", families: ["evm", "move"], match: () => undefined };

export const publicMounts: readonly Mount[] = [rpcMount, nodeMount, webhookMount];
