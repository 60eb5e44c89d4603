/**
 * The fullnode REST API's conventions that every answer follows: the ledger headers, the error
 * body `{ message, error_code, vm_error_code }` with its status, and how path and query parameters
 * are read (a parameter that does not parse is a 400 `web_framework_error`, as the fullnode's web
 * framework answers it, without ledger headers).
 */
import type { AptosErrorJson, BlockJson, LedgerInfo } from "./types";

export class AptosApiError extends Error {
  override name = "AptosApiError";
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    /** Errors about the ledger carry its headers; the web framework's parse errors do not. */
    readonly withLedger = true,
  ) {
    super(message);
  }

  toJSON(): AptosErrorJson {
    return { message: this.message, error_code: this.errorCode, vm_error_code: null };
  }
}

export const LEDGER_HEADERS = [
  "X-Aptos-Chain-Id",
  "X-Aptos-Ledger-Version",
  "X-Aptos-Ledger-Oldest-Version",
  "X-Aptos-Ledger-TimestampUsec",
  "X-Aptos-Epoch",
  "X-Aptos-Block-Height",
  "X-Aptos-Oldest-Block-Height",
] as const;

/** The headers every answer about the ledger carries, as a fullnode sends them. */
export function ledgerHeaders(info: LedgerInfo): Record<(typeof LEDGER_HEADERS)[number], string> {
  return {
    "X-Aptos-Chain-Id": String(info.chain_id),
    "X-Aptos-Ledger-Version": info.ledger_version,
    "X-Aptos-Ledger-Oldest-Version": info.oldest_ledger_version,
    "X-Aptos-Ledger-TimestampUsec": info.ledger_timestamp,
    "X-Aptos-Epoch": info.epoch,
    "X-Aptos-Block-Height": info.block_height,
    "X-Aptos-Oldest-Block-Height": info.oldest_block_height,
  };
}

const U64_MAX = 2n ** 64n - 1n;

function badParameter(name: string, type: string, reason: string): AptosApiError {
  return new AptosApiError(400, "web_framework_error", `failed to parse parameter \`${name}\`: failed to parse "${type}": ${reason}`, false);
}

const digits = (text: string) => /^\d+$/.test(text);

export function parseU64(name: string, text: string): bigint {
  if (!digits(text)) throw badParameter(name, "string(uint64)", text === "" ? "cannot parse integer from empty string" : "invalid digit found in string");
  const n = BigInt(text);
  if (n > U64_MAX) throw badParameter(name, "string(uint64)", "number too large to fit in target type");
  return n;
}

export function parseU16(name: string, text: string): number {
  if (!digits(text)) throw badParameter(name, "integer(uint16)", text === "" ? "cannot parse integer from empty string" : "invalid digit found in string");
  const n = BigInt(text);
  if (n > 65_535n) throw badParameter(name, "integer(uint16)", "number too large to fit in target type");
  return Number(n);
}

export function parseBool(name: string, text: string): boolean {
  if (text === "true") return true;
  if (text === "false") return false;
  throw badParameter(name, "boolean", "provided string was not `true` or `false`");
}

/** A 32-byte hash, with or without 0x, in any case: lower-case `0x…`. */
export function parseHash(name: string, text: string): string {
  const hex = text.startsWith("0x") || text.startsWith("0X") ? text.slice(2) : text;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw badParameter(name, "string(hash)", "invalid hash value: expected 32 bytes of hex");
  return `0x${hex.toLowerCase()}`;
}

/** An account address, with or without 0x, short or long: its long form `0x` + 64 hex digits. */
export function parseAddress(name: string, text: string): string {
  const hex = text.startsWith("0x") || text.startsWith("0X") ? text.slice(2) : text;
  if (!/^[0-9a-fA-F]{1,64}$/.test(hex)) throw badParameter(name, "string(address)", "invalid account address");
  return `0x${hex.toLowerCase().padStart(64, "0")}`;
}

/** A block's header fields as `/v1/blocks/by_height` writes them (before `transactions`). */
export function blockFields(b: { height: bigint; hash: string; timestamp: bigint; firstVersion: bigint; lastVersion: bigint }): Omit<BlockJson, "transactions"> {
  return {
    block_height: b.height.toString(),
    block_hash: b.hash,
    block_timestamp: b.timestamp.toString(),
    first_version: b.firstVersion.toString(),
    last_version: b.lastVersion.toString(),
  };
}
