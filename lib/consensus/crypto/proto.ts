import { concatBytes, utf8 } from "./hex";

/**
 * A minimal protobuf (proto3) writer — just what the header hash and vote sign bytes need.
 *
 * Scalar fields follow proto3's default omission, as gogoproto's generated `Marshal` does: a field
 * whose value is 0 / empty is not written at all. Embedded messages are written with `message()`,
 * which always writes the field (tag, length, body — even an empty body), matching gogoproto's
 * non-nullable embedded messages; for a nullable one that is nil, simply don't call it.
 * Fields must be written in field-number order to match Go's output byte for byte.
 */

const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;

/** Unsigned LEB128 of 0 ≤ value < 2^64. */
export function encodeVarint(value: bigint): Uint8Array {
  if (value < 0n || value > UINT64_MAX) throw new RangeError(`varint out of range: ${value}`);
  const out: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

/** `protoio.MarshalDelimited`: the message prefixed by its length as a varint. */
export function lengthPrefixed(message: Uint8Array): Uint8Array {
  return concatBytes(encodeVarint(BigInt(message.length)), message);
}

function checkInt64(value: bigint): void {
  if (value < INT64_MIN || value > INT64_MAX) throw new RangeError(`int64 out of range: ${value}`);
}

export class ProtoWriter {
  private readonly parts: Uint8Array[] = [];

  private tag(field: number, wireType: number): void {
    if (!Number.isInteger(field) || field < 1 || field > 0x1fffffff) throw new RangeError(`bad field number ${field}`);
    this.parts.push(encodeVarint(BigInt(field) * 8n + BigInt(wireType)));
  }

  /** uint64 / enum (non-negative). */
  uint64(field: number, value: bigint): this {
    if (value < 0n || value > UINT64_MAX) throw new RangeError(`uint64 out of range: ${value}`);
    if (value === 0n) return this;
    this.tag(field, WIRE_VARINT);
    this.parts.push(encodeVarint(value));
    return this;
  }

  uint32(field: number, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`uint32 out of range: ${value}`);
    return this.uint64(field, BigInt(value));
  }

  /** int64 (and int32): negative values are written as 10-byte two's-complement varints. */
  int64(field: number, value: bigint): this {
    checkInt64(value);
    if (value === 0n) return this;
    this.tag(field, WIRE_VARINT);
    this.parts.push(encodeVarint(BigInt.asUintN(64, value)));
    return this;
  }

  /** sfixed64: 8 bytes, little endian, two's complement. */
  sfixed64(field: number, value: bigint): this {
    checkInt64(value);
    if (value === 0n) return this;
    this.tag(field, WIRE_FIXED64);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigInt64(0, value, true);
    this.parts.push(bytes);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    if (value.length === 0) return this;
    this.tag(field, WIRE_LEN);
    this.parts.push(encodeVarint(BigInt(value.length)), value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, utf8(value));
  }

  /** An embedded message, always written (even when `body` is empty). */
  message(field: number, body: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.parts.push(encodeVarint(BigInt(body.length)), body);
    return this;
  }

  finish(): Uint8Array {
    return concatBytes(...this.parts);
  }
}

const UINT_RE = /^[0-9]+$/;
const INT_RE = /^-?[0-9]+$/;

/** Parses a decimal uint64 (string, safe integer or bigint), as in CometBFT's JSON. */
export function parseUint64(value: string | number | bigint, what: string): bigint {
  const n = toBigInt(value, UINT_RE, what);
  if (n < 0n || n > UINT64_MAX) throw new RangeError(`${what}: out of uint64 range`);
  return n;
}

/** Parses a decimal int64 (string, safe integer or bigint), as in CometBFT's JSON. */
export function parseInt64(value: string | number | bigint, what: string): bigint {
  const n = toBigInt(value, INT_RE, what);
  if (n < INT64_MIN || n > INT64_MAX) throw new RangeError(`${what}: out of int64 range`);
  return n;
}

function toBigInt(value: string | number | bigint, re: RegExp, what: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError(`${what}: not a safe integer: ${value}`);
    return BigInt(value);
  }
  if (!re.test(value)) throw new TypeError(`${what}: not a decimal integer: ${JSON.stringify(value)}`);
  return BigInt(value);
}
