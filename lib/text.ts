/**
 * Text that requests bring into storage. PostgreSQL's text and jsonb columns cannot hold U+0000
 * (text refuses the byte, SQLSTATE 22021; jsonb the \u0000 escape, 22P05), and a string with an
 * unpaired surrogate reaches the database as U+FFFD, changed without a word, as bytes that are not
 * UTF-8 do when decoded leniently. So every request body that may be stored is decoded here,
 * strictly, and refused with 400 INVALID_PARAMETER naming where such text is. Bodies that are data
 * (a test inbox's) are stored as bytes instead, and excerpts (logged bodies, receivers' answers)
 * with U+FFFD in place of what cannot be stored. A chain's data (a node's events, an Aptos
 * transaction, the webhook messages built from them) cannot be refused: it is kept in json columns,
 * which hold such text escaped as long as nothing decodes it to text (->>, jsonb, a record's text
 * field), and is indexed for search in the excerpt's form.
 */
import { AppError } from "@/lib/errors";

/** U+0000, or a surrogate that is not half of a pair. */
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_TEXT.source, "g");

/**
 * An excerpt of someone else's text (a logged body, a receiver's answer) as PostgreSQL can store
 * it: a glimpse, not data, so what it cannot hold becomes U+FFFD instead of being refused. Also
 * the form in which a chain's text is indexed for search (the data itself is kept as JSON, which
 * holds it escaped), and so the form of a search's operands.
 */
export function storableExcerpt(s: string): string {
  return UNSTORABLE_TEXT.test(s) ? s.replace(UNSTORABLE_ALL, "\uFFFD") : s;
}

/** Why PostgreSQL cannot store `s` as it is ("must not contain …"); undefined when it can. */
export function unstorableText(s: string): string | undefined {
  const found = UNSTORABLE_TEXT.exec(s);
  if (!found) return undefined;
  if (found[0] === "\u0000") return "must not contain the NUL character (U+0000)";
  return `must not contain an unpaired surrogate (\\u${found[0].charCodeAt(0).toString(16)})`;
}

/**
 * The first string of a parsed JSON value, key or value, that PostgreSQL cannot store, as a
 * message naming its path (`condition.eventData.amount: must not …`); undefined when there is none.
 * Iterative: a body may nest deeper than the call stack goes.
 */
export function unstorableTextIn(value: unknown): string | undefined {
  const where = (path: string) => (path === "" ? "The request body" : path.length > 200 ? `${path.slice(0, 200)}…` : path);
  // `parent`: the path of the object whose key `key` is.
  const stack: Array<{ value: unknown; path: string; key?: string; parent?: string }> = [{ value, path: "" }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.key !== undefined) {
      const problem = unstorableText(item.key);
      if (problem) return `${where(item.parent!)}: the key ${JSON.stringify(item.key.slice(0, 40))} ${problem}.`;
    }
    const v = item.value;
    if (typeof v === "string") {
      const problem = unstorableText(v);
      if (problem) return `${where(item.path)}: ${problem}.`;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${item.path}[${i}]` });
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      // Pushed last to first, so they are checked in the document's order; a key before its value.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push({ value: child, path: item.path === "" ? key : `${item.path}.${key}`, key, parent: item.path });
      }
    }
  }
  return undefined;
}

/**
 * Where the first byte sequence that is not UTF-8 starts (the decoder's rules: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or -1 when all of it is.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // Continuation bytes after the lead byte, and the range the first of them must be in.
    let n: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b === 0xe0) low = 0xa0;
      else if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b === 0xf0) low = 0x90;
      else if (b === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < low || c > high) return i;
      low = 0x80;
      high = 0xbf;
    }
    i += n + 1;
  }
  return -1;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text; 400 when its bytes are not UTF-8 (a leading byte order mark is dropped). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new AppError("INVALID_PARAMETER", `The request body is not valid UTF-8 (byte offset ${invalidUtf8Offset(bytes)}).`);
  }
}

// Only these escapes put NUL or a surrogate into what JSON.parse answers: decoded strictly, the
// text itself holds neither (JSON refuses a raw NUL). A body without them is not walked.
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * A JSON request body that may be stored: 400 INVALID_PARAMETER when it is not UTF-8, empty, not
 * JSON, or holds a string (key or value) that PostgreSQL cannot store, each saying which.
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const text = decodeUtf8(bytes).trim();
  if (text === "") throw new AppError("INVALID_PARAMETER", "The request body is empty: send a JSON object with Content-Type: application/json.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AppError("INVALID_PARAMETER", `The request body is not valid JSON (${(e as Error).message.slice(0, 200)}).`);
  }
  const problem = SUSPECT_ESCAPE.test(text) ? unstorableTextIn(value) : undefined;
  if (problem) throw new AppError("INVALID_PARAMETER", problem);
  return value;
}
