/**
 * What the request log shows of a request: excerpts of its bodies and its request line, cut and
 * with API keys and secret-looking values masked.
 */
import { KEY_IN_TEXT, KEY_PREFIX } from "@/lib/keys/secret";
import { storableExcerpt } from "@/lib/text";

/** Longest params, result and path excerpt stored, in characters. */
export const EXCERPT_CHARS = 2048;

// Names of JSON fields and query parameters that hold a secret (any case, anywhere in the name).
const SECRET_NAME = String.raw`[\w-]*(?:api[_-]?key|secret|token|passw(?:or)?d|pwd|passphrase|priv(?:ate)?[_-]?key|mnemonic|seed[_-]?phrase|credential|auth|session|cookie)[\w-]*`;
const SECRET_FIELD = new RegExp(`"${SECRET_NAME}"\\s*:\\s*`, "gi");
const SECRET_PARAM = new RegExp(`([?&;]${SECRET_NAME}=)([^&#\\s]*)`, "gi");
const BEARER = /(Bearer\s+)[^\s"',]+/gi;
const SECRET_HINT = /key|secret|token|passw|pwd|phrase|mnemonic|credential|auth|session|cookie|bearer/i;
// Percent-escapes (in a URL) and JSON \u escapes of the characters a key is made of: decoded before
// masking, so an escaped key is masked like a plain one (the gateway decodes them too).
const ESCAPED_URL = /%(?:[46][1-9A-F]|[57][0-9A]|3[0-9]|5F|2D|2E|7E)/gi;
const ESCAPED_JSON = /\\u00(?:[46][1-9A-F]|[57][0-9A]|3[0-9]|5F)/gi;
export const MASK = "••••";

/** The escapes `pattern` matches (`%5F`, `\u005f`) as the characters they stand for; the hex digits end each one. */
const decodeEscapes = (text: string, pattern: RegExp) => text.replace(pattern, (e) => String.fromCharCode(parseInt(e.slice(-2), 16)));

/**
 * Where the JSON value starting at `i` ends (the index after it), or the text's end when it is
 * cut off: a string, an array or object (brackets counted outside strings), or a scalar.
 */
function valueEnd(s: string, i: number): number {
  const first = s[i];
  if (first === '"') {
    for (let j = i + 1; j < s.length; j++) {
      if (s[j] === "\\") j++;
      else if (s[j] === '"') return j + 1;
    }
    return s.length;
  }
  if (first === "[" || first === "{") {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (c === '"') j = valueEnd(s, j) - 1;
      else if (c === "[" || c === "{") depth++;
      else if ((c === "]" || c === "}") && --depth === 0) return j + 1;
    }
    return s.length;
  }
  let j = i;
  while (j < s.length && !/[\s,}\]]/.test(s[j]!)) j++;
  return j;
}

/** JSON fields named like a secret: their value (string, number, array or object) becomes "••••"; null and booleans stay. */
function maskSecretFields(s: string): string {
  let out = "";
  let from = 0;
  for (const m of s.matchAll(SECRET_FIELD)) {
    const at = m.index + m[0].length;
    if (at < from) continue; // inside a value already masked
    const end = valueEnd(s, at);
    const value = s.slice(at, end);
    if (value === "" || value === "null" || value === "true" || value === "false") continue;
    out += `${s.slice(from, at)}"${MASK}"`;
    from = end;
  }
  return from === 0 ? s : out + s.slice(from);
}

/** An excerpt with keys and secret-looking values masked, cut to `max` characters (a cut is marked with …). */
export function maskExcerpt(text: string, max = EXCERPT_CHARS): string {
  let s = text.length > max + 256 ? text.slice(0, max + 256) : text;
  if (s.includes("\\u00")) s = decodeEscapes(s, ESCAPED_JSON);
  // Most excerpts hold nothing to mask: two cheap scans decide, before the costlier patterns.
  if (s.includes(KEY_PREFIX)) s = s.replace(KEY_IN_TEXT, `${KEY_PREFIX}${MASK}`);
  if (SECRET_HINT.test(s)) s = maskSecretFields(s).replace(SECRET_PARAM, `$1${MASK}`).replace(BEARER, `$1${MASK}`);
  if (s.length > max || text.length > max + 256) s = `${s.slice(0, max)}…`;
  // A cut can leave a lone surrogate.
  return storableExcerpt(s);
}

/** A request line (`POST /node/...?...`) as the log shows it: escaped key characters decoded, then masked. */
export function maskRequestLine(text: string): string {
  return maskExcerpt(text.includes("%") ? decodeEscapes(text, ESCAPED_URL) : text, 512);
}
