// Small scanners over JSON text, without recursion and without building anything: they run on
// every body before (nesting) or after (raw ids) JSON.parse.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The index of the quote closing the string that opens at `open`, or -1 when it does not close. */
function stringEnd(text: string, open: number): number {
  let q = text.indexOf('"', open + 1);
  while (q !== -1) {
    // A quote preceded by an odd number of backslashes is escaped. Each run of backslashes ends at
    // one quote, so the runs counted over a whole string add up to its length at most.
    let backslashes = 0;
    for (let k = q - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
  return -1;
}

/**
 * Whether arrays and objects in `text` nest deeper than `limit` levels (`{"a":[1]}` is 2). Stops at
 * the first level over the limit, so a body of a million `[` costs no more than one of `limit`.
 * Meant to run before JSON.parse: on text that is not JSON the answer is merely a guess.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return false;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65;

/**
 * Where the number given as the "id" member starts: in the top-level object (`starts` undefined;
 * returns the position, -1 when there is none), or in each object of a top-level array (`starts[i]`
 * for item i, left as it was where there is none). The first "id" member of an object counts; a
 * key written with escapes (`"\u0069d"`) is not recognised. `text` must be valid JSON.
 */
function scanIds(text: string, starts: Int32Array | undefined): number {
  const target = starts ? 2 : 1;
  let depth = 0;
  let item = 0;
  // Of the container open at the target depth: is it an object, is a key due next, was the last key "id".
  let inObject = false;
  let keyNext = false;
  let idKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    switch (c) {
      case QUOTE: {
        const end = stringEnd(text, i);
        if (end === -1) return -1;
        if (keyNext && depth === target) {
          idKey = end === i + 3 && text.charCodeAt(i + 1) === 0x69 && text.charCodeAt(i + 2) === 0x64;
          keyNext = false;
        }
        i = end;
        break;
      }
      case COLON:
        if (idKey && depth === target) {
          idKey = false;
          let v = i + 1;
          while (isSpace(text.charCodeAt(v))) v++;
          const d = text.charCodeAt(v);
          if (d === MINUS || (d >= 0x30 && d <= 0x39)) {
            if (!starts) return v;
            if (item < starts.length && starts[item] === -1) starts[item] = v;
          }
        }
        break;
      case COMMA:
        if (depth === target) keyNext = inObject;
        else if (depth === 1) item++;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (++depth === target) {
          inObject = c === OPEN_OBJECT;
          keyNext = inObject;
          idKey = false;
        }
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        depth--;
        break;
    }
  }
  return -1;
}

/** Where the "id" number of the top-level object starts, -1 when it has none. */
export function idStart(text: string): number {
  return scanIds(text, undefined);
}

/** Where the "id" number of each item of a top-level array of `count` starts, -1 where there is none. */
export function idStarts(text: string, count: number): Int32Array {
  const starts = new Int32Array(count).fill(-1);
  scanIds(text, starts);
  return starts;
}

/** The end (exclusive) of the JSON number starting at `start`. */
export function numberEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
  return end;
}

/**
 * The end (exclusive) of the JSON array or object that opens at `open`: brackets matched outside
 * strings, strings closed. -1 when it does not close. Literals between the brackets are not
 * checked: this is for text a node wrote, to cut it into items without building them.
 */
export function containerEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return -1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * The [start, end) spans of the objects in the top-level array `text` (whitespace allowed around
 * and between them), or undefined when `text` is not an array of objects that closes where the
 * text ends (see containerEnd for what is checked).
 */
export function objectItems(text: string): Array<[number, number]> | undefined {
  let i = 0;
  while (isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return undefined;
  const items: Array<[number, number]> = [];
  i++;
  for (;;) {
    while (isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === CLOSE_ARRAY && items.length === 0) break;
    if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
    const end = containerEnd(text, i);
    if (end === -1) return undefined;
    items.push([i, end]);
    i = end;
    while (isSpace(text.charCodeAt(i))) i++;
    const c = text.charCodeAt(i);
    if (c === CLOSE_ARRAY) break;
    if (c !== COMMA) return undefined;
    i++;
  }
  i++;
  while (isSpace(text.charCodeAt(i))) i++;
  return i === text.length ? items : undefined;
}

/** The [start, end) span of the single object `text` holds (whitespace around allowed), or undefined. */
export function objectSpan(text: string): [number, number] | undefined {
  let i = 0;
  while (isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  const end = containerEnd(text, i);
  if (end === -1) return undefined;
  let j = end;
  while (isSpace(text.charCodeAt(j))) j++;
  return j === text.length ? [i, end] : undefined;
}
