import type { StatusClass } from "../meter";
import { EXCERPT_CHARS, maskExcerpt, maskRequestLine } from "./mask";

/** Rows kept per project: the sweep deletes older ones, and only this many per project wait for a flush. */
export const REQUEST_LOG_ROWS = 1000;
/** Characters (or bytes) of a body the excerpt is taken from: a little more than it keeps, for masking. */
const EXCERPT_SOURCE = EXCERPT_CHARS + 64;
/** Buffers backed by at most this many bytes are held as they are until the flush; larger ones are copied (their excerpt's bytes only). */
const MAX_HELD_BUFFER = 8192;

/**
 * One finished request, as the gateway hands it over. The log copies what it keeps: the entry and
 * its strings and bodies are the caller's again once `record` returns.
 */
export interface RequestLogEntry {
  projectId: string;
  keyId: string;
  requestId: string;
  /** When the answer was sent, ms since the epoch. */
  at: number;
  api: string;
  network: string;
  method: string;
  calls: number;
  status: number;
  statusClass: StatusClass;
  latencyMs: number;
  cu: number;
  /** The HTTP method and the request's URL (path and query). */
  httpMethod: string;
  url: string;
  /** The request's body and the answer as sent. */
  params: string | Buffer | undefined;
  result: string | Buffer | undefined;
}

/** What a body is held as until the flush: itself when small, else a copy of the part the excerpt is taken from. */
function held(body: string | Buffer | undefined): string | Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") {
    // A slice of a string can keep the whole string alive: the excerpt's part goes into a Buffer of its own.
    return body.length <= EXCERPT_SOURCE ? body : Buffer.from(body.slice(0, EXCERPT_SOURCE), "utf8");
  }
  return body.buffer.byteLength <= MAX_HELD_BUFFER ? body : Buffer.from(body.subarray(0, EXCERPT_SOURCE));
}

/** The first EXCERPT_SOURCE characters (or bytes, of a Buffer) of a body. */
function excerpt(body: string | Buffer | undefined): string {
  if (body === undefined) return "";
  return typeof body === "string" ? (body.length > EXCERPT_SOURCE ? body.slice(0, EXCERPT_SOURCE) : body) : body.toString("utf8", 0, Math.min(body.length, EXCERPT_SOURCE));
}

/** Most bytes of text an entry copies into its ring's buffer: its request id, method and URL, and its bodies while they fit. */
const ENTRY_BYTES = 512;
/** A ring's first capacity; it doubles as its project's entries arrive, up to REQUEST_LOG_ROWS. */
const FIRST_CAPACITY = 16;
/** The texts of an entry, in the order they take their slot's bytes. */
const REQUEST_ID = 0;
const METHOD = 1;
const URL_TEXT = 2;
const PARAMS = 3;
const RESULT = 4;
const TEXTS = 5;
/** A text's length when it is not in the slot's bytes: held by reference, or absent. */
const HELD = -1;
const ABSENT = -2;

type Text = string | Buffer | undefined;

/** Columns of `request_logs` as written and as read. */
export interface RequestLogColumns {
  key_id: string;
  request_id: string;
  api: string;
  network: string;
  method: string;
  calls: number;
  status: number;
  status_class: string;
  latency_ms: number;
  cu: number;
}

/** A row as written: cut and masked. */
export interface Row extends RequestLogColumns {
  project_id: string;
  at: string;
  path: string;
  params: string;
  result: string;
}

/** Copies an ASCII string into `bytes` at `at`; false (part written) when it holds anything else. */
function copyAscii(s: string, bytes: Buffer, at: number): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return false;
    bytes[at + i] = c;
  }
  return true;
}

/**
 * A project's newest entries since the last flush, at most REQUEST_LOG_ROWS (a ring: once full, the
 * oldest is overwritten). Entries are copied into columns and each entry's texts (at most
 * ENTRY_BYTES) one after the other into a circular buffer, so a request leaves nothing of its own
 * alive behind it: a ring holds the last thousand requests of a busy project for up to a flush
 * interval, and holding their objects would move every one of them into V8's old generation
 * (measured: 5 MB/s promoted at 15,000 requests/s, scavenges three times as long). Packed, the
 * texts of a request touch only the bytes they take (a JSON-RPC call's are a few hundred), not a
 * fixed slot each. The buffer holds capacity + 1 entries of ENTRY_BYTES, so the texts of the
 * newest `capacity` entries are never overwritten. Texts that do not fit (large bodies) are held
 * by reference, at most their excerpt's part. The ring is reused after each flush.
 */
export class Ring {
  /** Entries held. */
  size = 0;
  /** Entries overwritten since the last flush, never written: the project's rows in the table no longer end where these begin. */
  superseded = 0;
  private capacity = 0;
  /** The slot the next entry goes to; the oldest entry's once the ring is full. */
  private next = 0;
  private at = new Float64Array(0);
  private latency = new Float64Array(0);
  private status = new Int32Array(0);
  private calls = new Int32Array(0);
  private cu = new Float64Array(0);
  private keyId: string[] = [];
  private api: string[] = [];
  private network: string[] = [];
  private statusClass: string[] = [];
  private httpMethod: string[] = [];
  private bytes = Buffer.alloc(0);
  /** Where the next entry's texts go in `bytes`. */
  private textEnd = 0;
  /** Per slot: where its texts begin in `bytes`. */
  private textAt = new Int32Array(0);
  /** Per slot and text: its length in the slot's bytes, HELD or ABSENT. */
  private lengths = new Int32Array(0);
  /** Per slot and text: the texts held by reference. */
  private refs: Text[] = [];

  push(e: RequestLogEntry): void {
    if (this.size === this.capacity) {
      if (this.capacity < REQUEST_LOG_ROWS) this.grow();
      else this.superseded++;
    }
    const i = this.next;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    if (this.size < this.capacity) this.size++;
    this.at[i] = e.at;
    this.latency[i] = e.latencyMs;
    this.status[i] = e.status;
    this.calls[i] = e.calls;
    this.cu[i] = e.cu;
    // These strings outlive requests and mostly repeat: a slot is written only when its value changes.
    if (this.keyId[i] !== e.keyId) this.keyId[i] = e.keyId;
    if (this.api[i] !== e.api) this.api[i] = e.api;
    if (this.network[i] !== e.network) this.network[i] = e.network;
    if (this.statusClass[i] !== e.statusClass) this.statusClass[i] = e.statusClass;
    if (this.httpMethod[i] !== e.httpMethod) this.httpMethod[i] = e.httpMethod;
    // An entry's texts do not wrap: when an entry could reach past the end, it starts over at 0.
    let at = this.textEnd + ENTRY_BYTES > this.bytes.length ? 0 : this.textEnd;
    const end = at + ENTRY_BYTES;
    this.textAt[i] = at;
    const k = i * TEXTS;
    at = this.put(k + REQUEST_ID, e.requestId, at, end);
    at = this.put(k + METHOD, e.method, at, end);
    at = this.put(k + URL_TEXT, e.url, at, end);
    at = this.put(k + PARAMS, e.params, at, end);
    this.textEnd = this.put(k + RESULT, e.result, at, end);
  }

  /** Copies a text into the slot's bytes from `at` when it fits, else holds it; returns where the next text goes. */
  private put(k: number, text: Text, at: number, end: number): number {
    // The text the slot held by reference before, if any, is let go.
    if (this.lengths[k] === HELD) this.refs[k] = undefined;
    if (text === undefined) {
      this.lengths[k] = ABSENT;
      return at;
    }
    const room = end - at;
    let n = -1;
    if (typeof text !== "string") {
      if (text.length <= room) {
        this.bytes.set(text, at);
        n = text.length;
      }
    } else if (text.length <= room) {
      // Short ASCII texts (ids, methods, paths) by hand; the rest through the encoder, which stops
      // before a character that does not fit: with 4 bytes or more left over, none was left out.
      if (text.length <= 48 && copyAscii(text, this.bytes, at)) n = text.length;
      else {
        const written = this.bytes.write(text, at, room, "utf8");
        if (written <= room - 4 || written === Buffer.byteLength(text)) n = written;
      }
    }
    if (n !== -1) {
      this.lengths[k] = n;
      return at + n;
    }
    this.refs[k] = held(text);
    this.lengths[k] = HELD;
    return at;
  }

  /** The text `t` of slot `i`, at most its first EXCERPT_SOURCE characters. */
  private text(i: number, t: number): string {
    const k = i * TEXTS;
    const n = this.lengths[k + t]!;
    if (n === ABSENT) return "";
    if (n === HELD) return excerpt(this.refs[k + t]);
    let at = this.textAt[i]!;
    for (let j = 0; j < t; j++) at += Math.max(0, this.lengths[k + j]!);
    return this.bytes.toString("utf8", at, at + n);
  }

  private grow(): void {
    // The ring has not wrapped yet (it wraps only at REQUEST_LOG_ROWS): its slots are in order.
    const capacity = Math.min(REQUEST_LOG_ROWS, Math.max(FIRST_CAPACITY, this.capacity * 2));
    const floats = (a: Float64Array) => {
      const b = new Float64Array(capacity);
      b.set(a);
      return b;
    };
    const ints = (a: Int32Array, n: number) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.at = floats(this.at);
    this.latency = floats(this.latency);
    this.cu = floats(this.cu);
    this.status = ints(this.status, capacity);
    this.calls = ints(this.calls, capacity);
    this.lengths = ints(this.lengths, capacity * TEXTS);
    this.textAt = ints(this.textAt, capacity);
    for (let j = this.refs.length; j < capacity * TEXTS; j++) this.refs.push(undefined);
    // Texts keep their places: the buffer only grows at its end.
    const bytes = Buffer.allocUnsafeSlow((capacity + 1) * ENTRY_BYTES);
    this.bytes.copy(bytes);
    this.bytes = bytes;
    this.next = this.capacity;
    this.capacity = capacity;
  }

  /** The entries as rows, oldest first (cut and masked); the ring is empty after. */
  take(projectId: string): Row[] {
    const rows: Row[] = new Array(this.size);
    const first = this.size < this.capacity ? 0 : this.next;
    for (let j = 0; j < this.size; j++) {
      const i = (first + j) % this.capacity;
      rows[j] = {
        project_id: projectId,
        key_id: this.keyId[i]!,
        request_id: this.text(i, REQUEST_ID),
        at: new Date(this.at[i]!).toISOString(),
        api: this.api[i]!,
        network: this.network[i]!,
        method: this.text(i, METHOD),
        calls: this.calls[i]!,
        status: this.status[i]!,
        status_class: this.statusClass[i]!,
        latency_ms: Math.round(this.latency[i]! * 100) / 100,
        cu: this.cu[i]!,
        path: maskRequestLine(`${this.httpMethod[i]} ${this.text(i, URL_TEXT)}`),
        params: maskExcerpt(this.text(i, PARAMS)),
        result: maskExcerpt(this.text(i, RESULT)),
      };
    }
    this.size = 0;
    this.next = 0;
    this.textEnd = 0;
    this.superseded = 0;
    this.refs.fill(undefined);
    return rows;
  }

  /** Bytes of the texts held by reference (the rest are in the ring's buffer). */
  get heldBytes(): number {
    let n = 0;
    for (const r of this.refs) if (r !== undefined) n += typeof r === "string" ? r.length * 2 : r.buffer.byteLength;
    return n;
  }
}
