/**
 * Aptos (Move) names in webhook conditions: account addresses, entry functions
 * (`address::module::function`) and event types (`address::module::Struct<TypeArgs>`), checked and
 * written in one canonical form so that a condition compares equal to what the chain reports.
 * Addresses follow AIP-40 (https://github.com/aptos-foundation/AIPs/blob/main/aips/aip-40.md):
 * lower case; the special addresses 0x0 to 0xf short, every other address as 64 hex digits.
 * Pure functions with no imports: the console's form runs them in the browser.
 */

const HEX_ADDRESS = /^0x[0-9a-fA-F]{1,64}$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const PRIMITIVES = new Set(["bool", "u8", "u16", "u32", "u64", "u128", "u256", "i8", "i16", "i32", "i64", "i128", "i256", "address", "signer"]);
/** Type arguments nest at most this deep (`vector<vector<…>>`), which keeps parsing bounded. */
const MAX_TYPE_DEPTH = 8;

/** The AIP-40 form of an address, or null when it is not 0x followed by 1 to 64 hex digits. */
export function normalizeMoveAddress(text: string): string | null {
  if (!HEX_ADDRESS.test(text)) return null;
  const digits = text.slice(2).toLowerCase().replace(/^0+/, "");
  return digits.length <= 1 ? `0x${digits || "0"}` : `0x${digits.padStart(64, "0")}`;
}

/** `address::module::function` in canonical form, or null. */
export function normalizeMoveFunction(text: string): string | null {
  const parts = text.split("::");
  if (parts.length !== 3) return null;
  const [address, module, fn] = parts as [string, string, string];
  const canonical = normalizeMoveAddress(address);
  if (canonical === null || !IDENTIFIER.test(module) || !IDENTIFIER.test(fn)) return null;
  return `${canonical}::${module}::${fn}`;
}

class TypeParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parse(): string | null {
    const type = this.type(0);
    this.skipSpaces();
    return type !== null && this.pos === this.text.length ? type : null;
  }

  private skipSpaces(): void {
    while (this.text[this.pos] === " ") this.pos++;
  }

  /** Letters, digits, `_` and `:` up to the next `<`, `>`, `,` or space. */
  private word(): string {
    this.skipSpaces();
    const start = this.pos;
    while (this.pos < this.text.length && /[0-9A-Za-z_:]/.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  private eat(char: string): boolean {
    this.skipSpaces();
    if (this.text[this.pos] !== char) return false;
    this.pos++;
    return true;
  }

  private typeArguments(depth: number): string[] | null {
    const args: string[] = [];
    do {
      const arg = this.type(depth + 1);
      if (arg === null) return null;
      args.push(arg);
    } while (this.eat(","));
    return this.eat(">") ? args : null;
  }

  private type(depth: number): string | null {
    if (depth > MAX_TYPE_DEPTH) return null;
    const word = this.word();
    if (PRIMITIVES.has(word)) return word;
    if (word === "vector") {
      if (!this.eat("<")) return null;
      const args = this.typeArguments(depth);
      return args?.length === 1 ? `vector<${args[0]}>` : null;
    }
    const struct = normalizeMoveFunction(word);
    if (struct === null) return null;
    if (!this.eat("<")) return struct;
    const args = this.typeArguments(depth);
    return args === null ? null : `${struct}<${args.join(", ")}>`;
  }
}

/**
 * An event type `address::module::Struct`, optionally with type arguments
 * (`0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`), in canonical form (arguments separated by
 * ", "), or null.
 */
export function normalizeMoveStructType(text: string): string | null {
  const type = new TypeParser(text).parse();
  // A bare primitive or vector is a type, but never an event.
  return type !== null && type.includes("::") && !type.startsWith("vector<") ? type : null;
}
