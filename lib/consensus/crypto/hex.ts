/**
 * Byte helpers shared by the consensus hashing code: upper-case hex (how CometBFT's JSON shows
 * hashes and addresses), strict base64 (how it shows tx bytes, proof hashes and signatures),
 * and a few Uint8Array utilities. Every function returns plain `Uint8Array`s, never `Buffer`s.
 */

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Upper-case hex, as in CometBFT's `HexBytes` JSON. Empty input gives "". */
export function toHex(bytes: Uint8Array): string {
  return view(bytes).toString("hex").toUpperCase();
}

/** Decodes hex of either case; throws a TypeError on odd length or a non-hex character. */
export function fromHex(hex: string): Uint8Array {
  if (!HEX_RE.test(hex)) throw new TypeError("invalid hex string");
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** Standard, padded base64, as in CometBFT's JSON for `[]byte`. */
export function toBase64(bytes: Uint8Array): string {
  return view(bytes).toString("base64");
}

/**
 * Decodes standard padded base64 strictly: only canonical encodings are accepted (no whitespace,
 * no missing padding, no URL alphabet, no stray bits in the last character), so two different
 * strings never decode to the same bytes. Throws a TypeError otherwise.
 */
export function fromBase64(text: string): Uint8Array {
  if (!BASE64_RE.test(text)) throw new TypeError("invalid base64 string");
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) throw new TypeError("non-canonical base64 string");
  return new Uint8Array(bytes);
}

export function utf8(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "utf8"));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && view(a).equals(view(b));
}
