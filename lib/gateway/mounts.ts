import { aptosMount } from "@/lib/aptos/endpoint";
import { cometbftMount } from "@/lib/consensus/cometbft/endpoint";
import { rpcMount } from "@/lib/consensus/endpoint";
import { nodeMount } from "@/lib/evm/node-endpoint";
import { webhookMount } from "@/lib/webhooks/endpoint";
import type { Mount } from "./types";

export const publicMounts: readonly Mount[] = [rpcMount, cometbftMount, nodeMount, webhookMount, aptosMount];
