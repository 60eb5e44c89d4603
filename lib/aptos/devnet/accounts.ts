/**
 * The devnet's accounts and modules, derived from fixed seeds so every devnet has the same
 * addresses: users that sign transactions, the publishers of the devnet's own Move modules, and
 * the validators that propose blocks. Addresses are real Aptos addresses of their ed25519 keys.
 */
import { Account, AccountAddress, Ed25519PrivateKey, createUserDerivedObjectAddress } from "@aptos-labs/ts-sdk";
import { sha3 } from "../hash";

export interface DevnetAccount {
  name: string;
  privateKey: Ed25519PrivateKey;
  address: AccountAddress;
  /** Long form: `0x` + 64 hex digits (as the REST API writes account addresses). */
  hex: string;
  /** Its primary fungible store of APT (metadata object 0xa), where its APT balance lives. */
  aptStore: string;
}

/** The APT fungible asset's metadata object. */
export const APT_METADATA = "0xa";
export const APTOS_COIN = "0x1::aptos_coin::AptosCoin";

function account(name: string): DevnetAccount {
  const privateKey = new Ed25519PrivateKey(sha3(`blockgate aptos devnet ${name}`));
  const address = Account.fromPrivateKey({ privateKey, legacy: true }).accountAddress;
  return {
    name,
    privateKey,
    address,
    hex: address.toStringLong(),
    aptStore: createUserDerivedObjectAddress(address, AccountAddress.from(APT_METADATA)).toStringLong(),
  };
}

/** Accounts that send transactions. */
export const USERS: readonly DevnetAccount[] = Array.from({ length: 8 }, (_, i) => account(`user ${i + 1}`));

/** Publisher of `dev_coin::DevCoin`, a coin moved with `0x1::coin::transfer`. */
export const COIN_PUBLISHER = account("dev_coin publisher");
/** Publisher of `market`: items listed with nested attributes, and a legacy handle event. */
export const MARKET = account("market publisher");
/** Publisher of `vault`: a generic module holding deposits of a coin type. */
export const VAULT = account("vault publisher");

export const DEV_COIN = `${COIN_PUBLISHER.hex}::dev_coin::DevCoin`;

/** Validators proposing blocks in turn. */
export const VALIDATORS: readonly string[] = Array.from({ length: 4 }, (_, i) => account(`validator ${i + 1}`).hex);

/** Every account holding balances, by address. */
export const FUNDED: readonly DevnetAccount[] = [...USERS, VAULT];
