import { aptosMount } from "@/lib/aptos/endpoint";
import { rpcMount } from "@/lib/consensus/endpoint";
import { nodeMount } from "@/lib/evm/node-endpoint";
import type { Mount } from "./types";

/** The webhook API arrives with its capability; until then every path is unknown. */
const webhookMount: Mount = { prefix: "v1", families: ["evm", "move"], match: () => undefined };

export const publicMounts: readonly Mount[] = [rpcMount, nodeMount, webhookMount, aptosMount];
