/**
 * Parser for the CometBFT event query language used by `tx_search` and
 * `block_search`:
 *
 *   query     = condition { "AND" condition }
 *   condition = tag op operand | tag "EXISTS"
 *   tag       = (letter | "_" | ".") { letter | digit | "_" | "." | "-" }   e.g. transfer.sender
 *   op        = "=" | "<" | "<=" | ">" | ">=" | "CONTAINS"
 *   operand   = number | string | "TIME" " " rfc3339 | "DATE" " " yyyy-mm-dd
 *   number    = digit { digit } [ "." { digit } ]                   unsigned, no exponent
 *   string    = "'" { any character but "'" } "'"                  no escapes
 *
 * This is the grammar of CometBFT's scanner and parser (internal/pubsub/query/syntax): letters
 * and digits are Unicode ones, as Go's unicode.IsLetter and IsDigit; a tag may contain "-", as
 * CometBFT accepts since v1.0 (event types such as `wasm-transfer`); TIME takes whole seconds in
 * the years 1900-2999, DATE the same years, each after exactly one space.
 *
 * `=` takes any operand; `<`, `<=`, `>`, `>=` take a number, TIME or DATE;
 * CONTAINS takes a string. Keywords (AND, EXISTS, CONTAINS, TIME, DATE) are
 * case-sensitive upper case and cannot be used as tags, except TIME and DATE
 * when a space does not follow them (`TIME=5`, as CometBFT). There is no OR and no
 * parentheses. Whitespace (space, tab, newline) between tokens is optional
 * except where two words would run together; a number, TIME or DATE literal
 * must be followed by whitespace or the end of the query (so `5e3` is an error
 * rather than 5 followed by garbage). Queries are at most MAX_QUERY_LENGTH characters.
 *
 * Offsets are 0-based indexes into the input string (UTF-16 code units, i.e.
 * JavaScript string indexes; the same as character positions for ASCII).
 *
 * Pure TypeScript with no Node-only APIs: the browser query playground uses it.
 */
import { describeChar, isDigit, isSpace, scanDate, scanTimestamp, type LiteralFailure } from "./literals";

/** The longest query accepted, in characters: the API and the playground both check it here. */
export const MAX_QUERY_LENGTH = 512;
/**
 * Distinct conditions a query may hold. Each is a join in SQL, and PostgreSQL's planning time
 * grows steeply with their number (64 took ~320 ms to plan, whatever the data size), so a
 * query's cost is bounded before it runs. Repeated identical conditions count once.
 */
export const MAX_CONDITIONS = 10;

/** Keys answered from columns rather than event attributes (see sql.ts). */
export const TX_HASH_KEY = "tx.hash";
export const TX_HEIGHT_KEY = "tx.height";
export const BLOCK_HEIGHT_KEY = "block.height";

export type Operator = "=" | "<" | "<=" | ">" | ">=" | "CONTAINS" | "EXISTS";

export type Operand =
  /** Unsigned decimal exactly as written, e.g. "007.50". */
  | { kind: "number"; value: string }
  /** The text between the quotes. */
  | { kind: "string"; value: string }
  /** `text` is the RFC 3339 literal as written; it keeps sub-millisecond digits that `value` drops. */
  | { kind: "time"; value: Date; text?: string }
  /** YYYY-MM-DD. */
  | { kind: "date"; value: string };

export interface Condition {
  /** The tag: a composite key `<event type>.<attribute key>`, or a reserved key. */
  key: string;
  op: Operator;
  /** Absent exactly when `op` is EXISTS. */
  operand?: Operand;
  /** Offset of the tag in the input. */
  offset: number;
}

export interface Query {
  conditions: Condition[];
}

export interface QueryError {
  /** 0-based offset into the input where `expected` was expected. */
  offset: number;
  /** What the grammar wanted at `offset`, e.g. "a number, TIME or DATE". */
  expected: string;
  /** "parse error at offset 12: expected a number, TIME or DATE after '>', found a quoted string (...)". */
  message: string;
}

export type ParseResult = { ok: true; query: Query } | { ok: false; error: QueryError };

const KEYWORDS = new Set(["AND", "EXISTS", "CONTAINS", "TIME", "DATE"]);
const COMPARISONS = new Set<string>(["=", "<", "<=", ">", ">="]);
const AN_OPERATOR = "an operator (=, <, <=, >, >=, CONTAINS or EXISTS)";
const TIMESTAMP_EXAMPLE = "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z";
const DATE_EXAMPLE = "a date such as 2026-01-02";

const isLetter = (c: string | undefined) => c !== undefined && /^\p{L}$/u.test(c);
/** What a tag may start with: CometBFT reads an ASCII digit as the start of a number. */
const isTagStart = (c: string | undefined) => c !== undefined && (isLetter(c) || c === "_" || c === "." || (!isDigit(c) && /^\p{Nd}$/u.test(c)));
const isTagChar = (c: string | undefined) => isTagStart(c) || isDigit(c) || c === "-";
/** Characters that make up operators, so `==`, `!=` and `=>` are read whole and reported as unknown operators. */
const isOperatorChar = (c: string | undefined) => c === "=" || c === "<" || c === ">" || c === "!" || c === "~";

interface Detail {
  /** What `expected` follows, e.g. "'>'" → "expected ... after '>'". */
  after?: string;
  found?: string;
  hint?: string;
}

function queryError(offset: number, expected: string, { after, found, hint }: Detail = {}): QueryError {
  let message = `parse error at offset ${offset}: expected ${expected}`;
  if (after) message += ` after ${after}`;
  if (found) message += `, found ${found}`;
  if (hint) message += ` (${hint})`;
  return { offset, expected, message };
}

class Failure {
  constructor(readonly error: QueryError) {}
}

function caseHint(word: string, keywords: readonly string[]): string | undefined {
  const upper = word.toUpperCase();
  return keywords.includes(upper) && upper !== word ? `keywords are case-sensitive: write ${upper}` : undefined;
}

const OPERATOR_HINTS: Record<string, string> = {
  "==": "use = for equality",
  "!=": "negation is not supported",
  "<>": "negation is not supported",
  "=<": "did you mean <=?",
  "=>": "did you mean >=?",
};

class Parser {
  private pos = 0;

  constructor(private readonly src: string) {}

  query(): Query {
    this.skipSpace();
    if (this.atEnd()) this.fail(this.pos, "a condition", { found: "an empty query" });
    const conditions: Condition[] = [];
    const seen = new Set<string>();
    const add = (c: Condition) => {
      const identity = conditionIdentity(c);
      if (seen.has(identity)) return;
      if (seen.size === MAX_CONDITIONS) {
        this.fail(c.offset, `at most ${MAX_CONDITIONS} distinct conditions`, { found: "another one", hint: "narrow the search with fewer conditions, or tx.height / block.height bounds" });
      }
      seen.add(identity);
      conditions.push(c);
    };
    add(this.condition());
    for (;;) {
      this.skipSpace();
      if (this.atEnd()) return { conditions };
      const at = this.pos;
      const word = this.peekRun(isTagChar, at);
      if (word === "AND") {
        this.pos += word.length;
        this.skipSpace();
        add(this.condition("'AND'"));
        continue;
      }
      const hint = word.toUpperCase() === "OR" ? "OR is not supported; conditions can only be joined with AND" : caseHint(word, ["AND"]);
      this.fail(at, "'AND' or end of query", { found: this.describeToken(at), hint });
    }
  }

  private condition(after?: string): Condition {
    const offset = this.pos;
    const first = this.src[offset];
    if (!isTagStart(first)) {
      const hint = isDigit(first) ? "tags must start with a letter, '_' or '.'" : first === "(" ? "parentheses are not supported" : undefined;
      this.fail(offset, "a tag", { after, found: this.describeToken(offset), hint });
    }
    const key = this.takeRun(isTagChar);
    // TIME and DATE start a literal only when a space follows them; otherwise they are tags.
    const literalKeyword = (key === "TIME" || key === "DATE") && this.src[this.pos] === " ";
    if (KEYWORDS.has(key) && (literalKeyword || (key !== "TIME" && key !== "DATE"))) {
      this.fail(offset, "a tag", { after, found: `the keyword ${key}`, hint: "keywords cannot be used as tags" });
    }
    this.skipSpace();
    const op = this.operator(key);
    if (op === "EXISTS") return { key, op, offset };
    this.skipSpace();
    return { key, op, operand: this.operand(op), offset };
  }

  private operator(key: string): Operator {
    const at = this.pos;
    const after = `'${key}'`;
    const c = this.src[at];
    if (isOperatorChar(c)) {
      const op = this.peekRun(isOperatorChar, at);
      if (!COMPARISONS.has(op)) this.fail(at, AN_OPERATOR, { after, found: `unknown operator '${op}'`, hint: OPERATOR_HINTS[op] });
      this.pos += op.length;
      return op as Operator;
    }
    if (isLetter(c)) {
      const word = this.peekRun(isTagChar, at);
      if (word === "CONTAINS" || word === "EXISTS") {
        this.pos += word.length;
        return word;
      }
      this.fail(at, AN_OPERATOR, { after, found: `'${word}'`, hint: caseHint(word, ["CONTAINS", "EXISTS"]) });
    }
    this.fail(at, AN_OPERATOR, { after, found: this.describeToken(at) });
  }

  private operand(op: Exclude<Operator, "EXISTS">): Operand {
    const at = this.pos;
    const c = this.src[at];
    const after = `'${op}'`;
    const takesStrings = op === "=" || op === "CONTAINS";
    const expected = op === "CONTAINS" ? "a quoted string" : op === "=" ? "a number, a quoted string, TIME or DATE" : "a number, TIME or DATE";

    if (c === "'") {
      if (!takesStrings) this.fail(at, expected, { after, found: "a quoted string", hint: `${op} compares numbers and times; use = or CONTAINS for strings` });
      const close = this.src.indexOf("'", at + 1);
      if (close < 0) this.fail(this.src.length, "a closing single quote", { found: "end of query", hint: `the string opened at offset ${at} is unterminated` });
      this.pos = close + 1;
      return { kind: "string", value: this.src.slice(at + 1, close) };
    }
    if (op === "CONTAINS") this.fail(at, expected, { after, found: this.describeToken(at), hint: "CONTAINS matches a substring given as a quoted string" });

    if (isDigit(c)) return { kind: "number", value: this.number() };
    if ((c === "-" || c === "+") && isDigit(this.src[at + 1])) {
      this.fail(at, "an unsigned number", { after, found: `'${c}'`, hint: "numbers cannot have a sign" });
    }
    if (c === "." && isDigit(this.src[at + 1])) this.fail(at, expected, { after, found: this.describeToken(at), hint: "write 0.5, not .5" });
    if (isLetter(c)) {
      const word = this.peekRun(isTagChar, at);
      if (word === "TIME" || word === "DATE") {
        this.pos += word.length;
        return word === "TIME" ? this.time() : this.date();
      }
      // `TIME2026-01-02T...` reads as one word; point at the missing space.
      if (/^(TIME|DATE)[0-9]/.test(word)) this.fail(at + 4, "whitespace", { after: word.slice(0, 4), found: describeChar(this.src, at + 4) });
      const hint = caseHint(word, ["TIME", "DATE"]) ?? (takesStrings ? "strings must be in single quotes" : undefined);
      this.fail(at, expected, { after, found: `'${word}'`, hint });
    }
    this.fail(at, expected, { after, found: this.describeToken(at), hint: c === '"' && takesStrings ? "strings use single quotes" : undefined });
  }

  private number(): string {
    const start = this.pos;
    this.takeRun(isDigit);
    let expected = "a digit, '.' or the end of the number";
    if (this.src[this.pos] === ".") {
      // `5.` is a number, as strconv.ParseFloat reads it.
      this.pos++;
      this.takeRun(isDigit);
      expected = "a digit or the end of the number";
    }
    const next = this.src[this.pos];
    if (next !== undefined && !isSpace(next)) {
      this.fail(this.pos, expected, { found: describeChar(this.src, this.pos), hint: next === "e" || next === "E" ? "exponents are not supported" : undefined });
    }
    return this.src.slice(start, this.pos);
  }

  private time(): Operand {
    this.oneSpace("TIME");
    const at = this.pos;
    if (!isDigit(this.src[at])) this.literalStartError(at, TIMESTAMP_EXAMPLE, "TIME");
    const scan = scanTimestamp(this.src, at, undefined, { fraction: false });
    if (!scan.ok) this.literalError(scan);
    this.pos = scan.end;
    this.literalEnd("the end of the timestamp");
    return { kind: "time", value: scan.value, text: scan.text };
  }

  private date(): Operand {
    this.oneSpace("DATE");
    const at = this.pos;
    if (!isDigit(this.src[at])) this.literalStartError(at, DATE_EXAMPLE, "DATE");
    const scan = scanDate(this.src, at);
    if (!scan.ok) this.literalError(scan);
    this.pos = scan.end;
    this.literalEnd("the end of the date", this.src[this.pos] === "T" ? "use TIME for a timestamp" : undefined);
    return { kind: "date", value: scan.value };
  }

  /** Exactly one space between TIME or DATE and its value, as CometBFT's scanner reads them. */
  private oneSpace(keyword: string): void {
    if (this.src[this.pos] !== " ") this.fail(this.pos, "a space", { after: keyword, found: describeChar(this.src, this.pos) });
    this.pos++;
    if (isSpace(this.src[this.pos])) this.fail(this.pos, keyword === "TIME" ? TIMESTAMP_EXAMPLE : DATE_EXAMPLE, { after: `${keyword} and one space`, found: "more whitespace" });
  }

  private literalStartError(at: number, expected: string, keyword: string): never {
    const hint = this.src[at] === "'" ? `${keyword} literals are not quoted` : undefined;
    this.fail(at, expected, { after: keyword, found: this.describeToken(at), hint });
  }

  private literalError(f: LiteralFailure): never {
    this.fail(f.offset, f.expected, { found: f.found, hint: f.hint });
  }

  /** A number, TIME or DATE literal must not run into the next token. */
  private literalEnd(expected: string, hint?: string): void {
    if (!this.atEnd() && !isSpace(this.src[this.pos])) this.fail(this.pos, expected, { found: describeChar(this.src, this.pos), hint });
  }

  /** The token at `at` as an error message names it. */
  private describeToken(at: number): string {
    const c = this.src[at];
    if (c === "'") return "a quoted string";
    if (isTagChar(c)) return quote(this.peekRun(isTagChar, at));
    if (isOperatorChar(c)) return quote(this.peekRun(isOperatorChar, at));
    return describeChar(this.src, at);
  }

  private fail(offset: number, expected: string, detail?: Detail): never {
    throw new Failure(queryError(offset, expected, detail));
  }

  private atEnd(): boolean {
    return this.pos >= this.src.length;
  }

  private skipSpace(): void {
    while (isSpace(this.src[this.pos])) this.pos++;
  }

  private peekRun(accept: (c: string | undefined) => boolean, from: number): string {
    let end = from;
    while (end < this.src.length && accept(this.src[end])) end++;
    return this.src.slice(from, end);
  }

  private takeRun(accept: (c: string | undefined) => boolean): string {
    const run = this.peekRun(accept, this.pos);
    this.pos += run.length;
    return run;
  }
}

/** Quotes a fragment of the input for a message, shortening long ones. */
function quote(text: string): string {
  return `'${text.length > 32 ? `${text.slice(0, 32)}…` : text}'`;
}

/** Conditions with the same identity hold for the same rows: one of them is enough. */
function conditionIdentity(c: Condition): string {
  const o = c.operand;
  const operand = o === undefined ? "" : o.kind === "time" ? `time:${o.text ?? o.value.toISOString()}` : `${o.kind}:${o.value}`;
  return `${c.key}\u0000${c.op}\u0000${operand}`;
}

/**
 * Parses a CometBFT query. Never throws: syntax errors come back as
 * `{ ok: false, error }` with the offset, what was expected there, and a
 * message of the form
 * `parse error at offset N: expected X[ after Y][, found Z][ (hint)]`.
 */
export function parseQuery(input: string): ParseResult {
  if (input.length > MAX_QUERY_LENGTH) {
    return {
      ok: false,
      error: queryError(MAX_QUERY_LENGTH, `at most ${MAX_QUERY_LENGTH} characters`, { found: `${input.length} characters`, hint: "the query is too long" }),
    };
  }
  try {
    return { ok: true, query: new Parser(input).query() };
  } catch (e) {
    if (e instanceof Failure) return { ok: false, error: e.error };
    throw e;
  }
}
