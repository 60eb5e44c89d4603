// The contracts every Blockgate EVM devnet carries, described for the traffic generator, the
// playground and tests. Plain data (no bigint), safe to serialize and to import from the browser.
import { getContractAddress, toEventSelector, type Address } from "viem";
import { BlockgateToken, Emitter } from "./artifacts";

export { BlockgateToken, Emitter } from "./artifacts";

const TRANSFER = "Transfer(address,address,uint256)";
const APPROVAL = "Approval(address,address,uint256)";
const PING = "Ping(address,uint256,string,uint256)";

export const DEVNET_CONTRACTS = {
  /** Both contracts are deployed by the devnet's first account (`eth_accounts[0]`) with CREATE. */
  token: {
    contract: "BlockgateToken",
    name: "Blockgate Devnet Token",
    symbol: "BGT",
    decimals: 18,
    /** 1,000,000,000 BGT in base units (decimal string; `BigInt(...)` it). */
    totalSupply: "1000000000000000000000000000",
    /** Deployer nonce of the deterministic deployment: the address is CREATE(deployer, nonce). */
    deployerNonce: 0,
    abi: BlockgateToken.abi,
    events: {
      Transfer: {
        signature: TRANSFER,
        topic0: toEventSelector(TRANSFER),
        indexed: ["from", "to"],
        data: ["value"],
      },
      Approval: {
        signature: APPROVAL,
        topic0: toEventSelector(APPROVAL),
        indexed: ["owner", "spender"],
        data: ["value"],
      },
    },
  },
  emitter: {
    contract: "Emitter",
    deployerNonce: 1,
    abi: Emitter.abi,
    events: {
      Ping: {
        signature: PING,
        topic0: toEventSelector(PING),
        indexed: ["sender", "round"],
        data: ["note", "value"],
      },
    },
  },
} as const;

/**
 * Where the devnet contracts live when deployed deterministically by `deployer` (the devnet's
 * `eth_accounts[0]`); with anvil's default mnemonic these are 0x5FbDB2315678afecb367f032d93F642f64180aa3
 * and 0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512.
 */
export function devnetContractAddresses(deployer: Address): { token: Address; emitter: Address } {
  return {
    token: getContractAddress({ from: deployer, nonce: BigInt(DEVNET_CONTRACTS.token.deployerNonce) }),
    emitter: getContractAddress({ from: deployer, nonce: BigInt(DEVNET_CONTRACTS.emitter.deployerNonce) }),
  };
}
