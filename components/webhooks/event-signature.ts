/**
 * The LOG builder's event-signature helper: "Transfer(address indexed from, address indexed to,
 * uint256 value)" → topics[0] (Keccak-256 of the canonical signature) and, for each indexed
 * parameter, the 32-byte topic a value gives. Solidity's rules
 * (https://docs.soliditylang.org/en/latest/abi-spec.html#events): value types are ABI-encoded to
 * 32 bytes; string and bytes are hashed with Keccak-256; arrays and structs are hashed encodings,
 * which this helper leaves to be entered as a topic directly.
 */
import { encodeAbiParameters, isAddress, isHex, keccak256, parseAbiItem, toBytes, toEventSelector, type AbiEvent } from "viem";

export interface IndexedParam {
  /** Position in topics: 1 to 3. */
  topic: number;
  name: string;
  type: string;
}

export interface ParsedEvent {
  name: string;
  /** Canonical form: Transfer(address,address,uint256). */
  canonical: string;
  topic0: `0x${string}`;
  indexed: IndexedParam[];
}

/** Parses an event signature (with or without the leading "event"); an error in words otherwise. */
export function parseEventSignature(text: string): { event: ParsedEvent } | { error: string } {
  const source = text.trim().replace(/;$/, "");
  if (source === "") return { error: "Enter an event signature, such as Transfer(address indexed from, address indexed to, uint256 value)." };
  let item: AbiEvent;
  try {
    const parsed = parseAbiItem(/^event\s/.test(source) ? source : `event ${source}`);
    if (parsed.type !== "event") return { error: "This is not an event signature." };
    item = parsed;
  } catch {
    return { error: "Not a valid event signature: write it as Name(type [indexed] [name], …), such as Transfer(address indexed from, address indexed to, uint256 value)." };
  }
  if (item.anonymous) return { error: "An anonymous event has no signature topic: enter its topics directly." };
  const indexed = item.inputs.flatMap((p, i) => (p.indexed ? [{ name: p.name || `param${i}`, type: p.type }] : [])).map((p, i) => ({ ...p, topic: i + 1 }));
  if (indexed.length > 3) return { error: "An event has at most 3 indexed parameters." };
  const canonical = `${item.name}(${item.inputs.map((p) => canonicalType(p)).join(",")})`;
  return { event: { name: item.name, canonical, topic0: toEventSelector(item), indexed } };
}

function canonicalType(p: { type: string; components?: readonly { type: string }[] }): string {
  if (!p.type.startsWith("tuple")) return p.type;
  return `(${(p.components ?? []).map((c) => canonicalType(c)).join(",")})${p.type.slice("tuple".length)}`;
}

/** Whether this helper can turn a value of the type into a topic. */
export function topicSupported(type: string): boolean {
  return /^(address|bool|string|bytes|bytes([1-9]|[12]\d|3[012])|u?int(\d+)?)$/.test(type);
}

/**
 * The topic an indexed parameter's value gives: null for an empty value (any), else the 32-byte
 * topic or an error in words.
 */
export function valueToTopic(type: string, raw: string): { topic: `0x${string}` | null } | { error: string } {
  const value = type === "string" ? raw : raw.trim();
  if (value === "") return { topic: null };
  if (type === "string") return { topic: keccak256(toBytes(value)) };
  if (type === "bytes") return isHex(value, { strict: true }) && value.length % 2 === 0 ? { topic: keccak256(value) } : { error: "must be hex bytes, such as 0x1234" };
  try {
    if (type === "address") {
      if (!isAddress(value, { strict: false })) return { error: "must be an address: 0x followed by 40 hex digits" };
      return { topic: encodeAbiParameters([{ type: "address" }], [value]) };
    }
    if (type === "bool") {
      if (value !== "true" && value !== "false") return { error: "must be true or false" };
      return { topic: encodeAbiParameters([{ type: "bool" }], [value === "true"]) };
    }
    const int = /^(u?)int(\d*)$/.exec(type);
    if (int) {
      if (!/^-?\d+$|^0x[0-9a-fA-F]+$/.test(value)) return { error: "must be a whole number (decimal, or hex with 0x)" };
      return { topic: encodeAbiParameters([{ type }], [BigInt(value)]) };
    }
    const fixed = /^bytes(\d+)$/.exec(type);
    if (fixed) {
      const size = Number(fixed[1]);
      if (!isHex(value, { strict: true }) || value.length !== 2 + size * 2) return { error: `must be ${size} bytes: 0x followed by ${size * 2} hex digits` };
      return { topic: encodeAbiParameters([{ type }], [value]) };
    }
  } catch (e) {
    return { error: e instanceof Error && /range/i.test(e.message) ? `is out of range for ${type}` : `is not a valid ${type}` };
  }
  return { error: `${type} values are hashed in a way this helper does not compute: enter the topic directly` };
}
