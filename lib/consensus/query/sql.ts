/**
 * Compiles a parsed CometBFT query (parse.ts) into a parameterised PostgreSQL
 * boolean expression for `tx_search` (rows of `consensus_txs t`) or
 * `block_search` (rows of `consensus_blocks b`).
 *
 * Semantics, per condition (conditions are ANDed; each is evaluated on its own,
 * so two conditions on one key may be satisfied by different attributes):
 *
 * - An event key `<event type>.<attribute key>` holds when ANY attribute of the
 *   tx (or of the block's block-level events) with that composite key matches.
 *   - `EXISTS`: some attribute with that key exists.
 *   - `= 'string'`: the value equals the string exactly (case-sensitive).
 *   - `CONTAINS 'string'`: the value contains the string (case-sensitive).
 *   - number comparisons use the leading number of the value (`num`, see
 *     literals.leadingNumber): `8stake` compares as 8; a value without a
 *     leading number never matches.
 *   - TIME comparisons use the value read as an RFC 3339 time (`time`); a value
 *     that is not one never matches.
 *   - DATE comparisons use that time truncated to its UTC day, written as
 *     half-open ranges so they stay index range scans:
 *     `= D` → [D, D+1), `< D` → < D, `<= D` → < D+1, `> D` → >= D+1, `>= D` → >= D.
 * - Reserved keys are answered from columns, as if every tx (block) carried
 *   exactly one attribute with that key:
 *   - `tx.height` (tx_search) and `block.height` (block_search): the height.
 *     Numeric comparisons are exact integer comparisons even for a fractional
 *     operand (`> 5.5` ≡ `> 5`; `= 5.5` never matches). `= 'string'` matches the
 *     decimal text of the height ('5' matches, '05' never does). `CONTAINS`
 *     searches the decimal text. TIME/DATE never match. EXISTS always holds.
 *   - `tx.hash` (tx_search): the hash (upper-case hex). `=` and `CONTAINS`
 *     compare case-insensitively (the operand is upper-cased; a bare all-digit
 *     number is taken as hash text). Other comparisons never match: a hash is
 *     not a number or a time. EXISTS always holds.
 *   In block_search `tx.*` keys, and in tx_search `block.height`, are ordinary
 *   event keys.
 *
 * Parameters: only values go into `params`, never into the SQL text; that
 * includes keys. Each condition pushes its key (event keys only) and then its
 * value(s), in compiled order (see rank: selective-first, ties in query order);
 * `$n` is the parameter's 1-based position after the push. Conditions that can never (or always) hold compile to the constant
 * FALSE (TRUE) and push nothing, so every pushed parameter is referenced
 * (PostgreSQL rejects a statement with an unreferenced parameter whose type it
 * cannot infer). Values are pushed as strings and cast in SQL (`::numeric`,
 * `::timestamptz`, `::bigint`) so the driver never converts them: numbers stay
 * exact, times keep the offset written in the query.
 *
 * Height bounds: every comparison of the height column (`tx.height > 5`,
 * `block.height = 7`) is repeated inside each attribute subquery on `a.height`,
 * reusing its parameter. It changes no answer (the subquery already requires
 * a.height = the row's height, and the conditions are ANDed) but lets the
 * attribute test read only the key's attributes within the range.
 *
 * Indexes (prisma/schema.prisma):
 *   consensus_tx_attrs    primary key (network, key, height, tx_index, ord),
 *                         (network, key, value, height, tx_index),
 *                         (network, key, num) where num is set,
 *                         (network, key, time) where time is set
 *   consensus_block_attrs the same with (network, key, height, ord)
 *   consensus_txs         (network, height, tx_index), (network, hash)
 *   consensus_blocks      (network, height)
 * PostgreSQL can either run each EXISTS as a semi-join driven by a range scan of
 * (network, key, value | num | time) — `=` on value, range on num/time, DATE as
 * a time range — or of the key's attributes in chain order (the primary key,
 * within the height bounds), or probe (network, key, height, tx_index) per
 * candidate row when another condition is more selective. CONTAINS and EXISTS
 * use the (network, key) prefix and filter the values within the key.
 * Reserved keys compare bare columns of the same type (`bigint` against
 * `$n::bigint`, `hash` against upper-cased text), so they use the table
 * indexes directly. Keys over 256 bytes and values over 2 kB are not indexed,
 * and the index holds U+FFFD for NUL and unpaired surrogates (lib/consensus/store.ts):
 * the caller gives a query whose string operands have it too (handlers.ts).
 *
 * The result is a conjunction of self-contained terms; wrap it in parentheses
 * before combining it with OR.
 */
import { dayBounds } from "./literals";
import { BLOCK_HEIGHT_KEY, TX_HASH_KEY, TX_HEIGHT_KEY, type Condition, type Query } from "./parse";

type Comparison = "=" | "<" | "<=" | ">" | ">=";

/** How one search target reaches its attributes and its reserved keys. */
interface Target {
  /** Correlated subquery selecting the row's attributes as `a`, up to (not including) the key test. */
  attributes: string;
  /** The reserved height key and the row's height column. */
  height: { key: string; column: string };
  reserved: Record<string, (c: Condition, params: unknown[]) => string>;
}

const TX: Target = {
  attributes: "SELECT 1 FROM consensus_tx_attrs a WHERE a.network = t.network AND a.height = t.height AND a.tx_index = t.tx_index",
  height: { key: TX_HEIGHT_KEY, column: "t.height" },
  reserved: {
    [TX_HASH_KEY]: (c, params) => hashTerm("t.hash", c, params),
  },
};

const BLOCK: Target = {
  attributes: "SELECT 1 FROM consensus_block_attrs a WHERE a.network = b.network AND a.height = b.height",
  height: { key: BLOCK_HEIGHT_KEY, column: "b.height" },
  reserved: {},
};

/** A tx_search condition over `consensus_txs t`. The caller has pushed the network as $1. */
export function compileTxQuery(query: Query, params: unknown[]): string {
  return compile(TX, query, params);
}

/** A block_search condition over `consensus_blocks b`. The caller has pushed the network as $1. */
export function compileBlockQuery(query: Query, params: unknown[]): string {
  return compile(BLOCK, query, params);
}

// Where the query's height bounds go in each attribute subquery, filled in once every condition
// is compiled (a bound may come after the attribute test in the query).
const HEIGHT_BOUNDS = "\u0000bounds\u0000";

/**
 * Where a condition goes in the compiled conjunction: tests of the row's own columns (the height
 * bounds, tx.hash) first, then attribute tests from the most to the least selective as a rule:
 * `=` on a string (one value of one key: an equality range of the value index), `=` on a number,
 * TIME or DATE (one value or one day of the num / time index), other comparisons (a range of it),
 * CONTAINS and EXISTS (every attribute of the key). Public searches run with a low
 * join_collapse_limit (lib/db/client.ts PUBLIC_PLANNER_SETTINGS): the planner chooses the order of
 * the first conditions only and joins the rest in this order.
 */
function rank(target: Target, c: Condition): number {
  if (c.key === target.height.key || Object.hasOwn(target.reserved, c.key)) return 0;
  if (c.op === "EXISTS") return 5;
  if (c.op === "CONTAINS") return 4;
  if (c.op !== "=") return 3;
  return c.operand?.kind === "string" ? 1 : 2;
}

function compile(target: Target, query: Query, params: unknown[]): string {
  if (query.conditions.length === 0) return "TRUE";
  const bounds: string[] = [];
  // A stable sort: conditions of one rank keep the order written.
  const ordered = query.conditions.map((c) => ({ c, rank: rank(target, c) })).sort((x, y) => x.rank - y.rank);
  const terms = ordered.map(({ c }) => {
    if (c.key === target.height.key) {
      const term = heightTerm(c, params);
      // A comparison of the height bounds the attributes too (a.height = the row's height).
      if (term.bounds) bounds.push(term.sql("a.height"));
      return term.sql(target.height.column);
    }
    const reserved = Object.hasOwn(target.reserved, c.key) ? target.reserved[c.key] : undefined;
    return reserved ? reserved(c, params) : attributeTerm(target, c, params);
  });
  const repeated = bounds.map((b) => ` AND ${b}`).join("");
  return terms.map((t) => t.replaceAll(HEIGHT_BOUNDS, repeated)).join(" AND ");
}

/** Pushes a value and returns its placeholder. */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** A condition the parser cannot produce (e.g. `<` with a string) from a hand-built Query. */
function unsupported(c: Condition): never {
  throw new TypeError(`unsupported condition: ${c.op} with ${c.operand ? `a ${c.operand.kind} operand` : "no operand"}`);
}

const isComparison = (op: Condition["op"]): op is Comparison => op !== "CONTAINS" && op !== "EXISTS";

function attributeTerm(target: Target, c: Condition, params: unknown[]): string {
  const key = param(params, c.key);
  return `EXISTS (${target.attributes} AND a.key = ${key}${attributeMatch(c, params)}${HEIGHT_BOUNDS})`;
}

/**
 * The value test on the attribute (or stored value, see compileTxCount) `alias`, prefixed with
 * " AND ", or "" for EXISTS.
 */
function attributeMatch(c: Condition, params: unknown[], alias = "a"): string {
  const { op, operand } = c;
  if (op === "EXISTS" && !operand) return "";
  if (!operand) return unsupported(c);
  if (op === "CONTAINS") {
    if (operand.kind !== "string") return unsupported(c);
    // strpos rather than LIKE: no wildcard escaping, and the operand is plain text.
    return ` AND strpos(${alias}.value, ${param(params, operand.value)}) > 0`;
  }
  if (!isComparison(op)) return unsupported(c);
  switch (operand.kind) {
    case "string":
      if (op !== "=") return unsupported(c);
      return ` AND ${alias}.value = ${param(params, operand.value)}`;
    case "number":
      return ` AND ${alias}.num ${op} ${param(params, operand.value)}::numeric`;
    case "time":
      return ` AND ${alias}.time ${op} ${param(params, operand.text ?? operand.value.toISOString())}::timestamptz`;
    case "date": {
      const day = dayBounds(operand.value);
      const at = (bound: string) => `${param(params, bound)}::timestamptz`;
      switch (op) {
        case "=": {
          const start = at(day.start);
          return ` AND ${alias}.time >= ${start} AND ${alias}.time < ${at(day.next)}`;
        }
        case "<":
          return ` AND ${alias}.time < ${at(day.start)}`;
        case "<=":
          return ` AND ${alias}.time < ${at(day.next)}`;
        case ">":
          return ` AND ${alias}.time >= ${at(day.next)}`;
        case ">=":
          return ` AND ${alias}.time >= ${at(day.start)}`;
      }
    }
  }
}

const INT64_MAX = 9223372036854775807n;
const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/** A height condition: its SQL for a height column, and whether it is a comparison that bounds it. */
interface HeightTerm {
  sql: (column: string) => string;
  bounds: boolean;
}

const constant = (sql: "TRUE" | "FALSE"): HeightTerm => ({ sql: () => sql, bounds: false });

function heightTerm(c: Condition, params: unknown[]): HeightTerm {
  const { op, operand } = c;
  if (op === "EXISTS") return constant("TRUE");
  if (!operand) return unsupported(c);
  if (op === "CONTAINS") {
    if (operand.kind !== "string") return unsupported(c);
    const value = param(params, operand.value);
    return { sql: (column) => `strpos(${column}::text, ${value}) > 0`, bounds: false };
  }
  switch (operand.kind) {
    case "number":
      return integerComparison(op, operand.value, params);
    case "string": {
      if (op !== "=") return unsupported(c);
      // The height's text is canonical decimal, so only a canonical string can equal it.
      if (!CANONICAL_INTEGER.test(operand.value) || BigInt(operand.value) > INT64_MAX) return constant("FALSE");
      const value = param(params, operand.value);
      return { sql: (column) => `${column} = ${value}::bigint`, bounds: true };
    }
    case "time":
    case "date":
      return constant("FALSE");
  }
}

/**
 * `column op number` for an integer column, rewritten so the operand is an
 * integer (keeping `bigint = bigint` index scans; comparing with `numeric`
 * would cast the column): for integer h and n < x < n+1, h > x ≡ h >= x ≡ h > n,
 * h < x ≡ h <= x ≡ h <= n, and h = x never holds. Operands beyond bigint's range
 * make the comparison constant.
 */
function integerComparison(op: Comparison, value: string, params: unknown[]): HeightTerm {
  const [whole = "0", fraction = ""] = value.split(".");
  const n = BigInt(whole);
  let cmp: Comparison = op;
  if (/[1-9]/.test(fraction)) {
    if (op === "=") return constant("FALSE");
    cmp = op === ">" || op === ">=" ? ">" : "<=";
  }
  if (n > INT64_MAX) return constant(cmp === "<" || cmp === "<=" ? "TRUE" : "FALSE");
  const bound = param(params, n.toString());
  return { sql: (column) => `${column} ${cmp} ${bound}::bigint`, bounds: true };
}

function hashTerm(column: string, c: Condition, params: unknown[]): string {
  const { op, operand } = c;
  if (op === "EXISTS") return "TRUE";
  if (!operand) return unsupported(c);
  if ((op === "=" || op === "CONTAINS") && (operand.kind === "string" || operand.kind === "number")) {
    // Hashes are stored upper-case; upper-casing the operand keeps the column bare for its index.
    const value = param(params, operand.value.toUpperCase());
    return op === "=" ? `${column} = ${value}` : `strpos(${column}, ${value}) > 0`;
  }
  return "FALSE";
}

/**
 * SQL answering tx_search's total_count from the counters ingestion keeps per attribute key and
 * per key and value (consensus_attr_keys, consensus_attr_values; lib/consensus/store.ts) instead
 * of visiting every match, for a query of exactly one event-key condition; null for any other
 * query. The caller has pushed the network as $1. The statement returns one row with `n`: the
 * count, or NULL when the counters cannot tell, and the caller then counts the matches. They
 * cannot tell for a CONTAINS, number, TIME or DATE test on a key some transaction holds with
 * several distinct values: a sum over the matching values would count it once per value. `=` on
 * a string is one value (each transaction is counted once per distinct value), EXISTS is the key.
 */
export function compileTxCount(query: Query, params: unknown[]): string | null {
  if (query.conditions.length !== 1) return null;
  const c = query.conditions[0]!;
  if (c.key === TX.height.key || Object.hasOwn(TX.reserved, c.key)) return null;
  const key = param(params, c.key);
  const keyRow = `FROM consensus_attr_keys k WHERE k.network = $1 AND k.key = ${key}`;
  if (c.op === "EXISTS" && !c.operand) return `SELECT coalesce((SELECT k.txs ${keyRow}), 0)::bigint AS n`;
  const sum = `SELECT coalesce(sum(v.txs), 0)::bigint FROM consensus_attr_values v WHERE v.network = $1 AND v.key = ${key}${attributeMatch(c, params, "v")}`;
  if (c.op === "=" && c.operand?.kind === "string") return `SELECT (${sum}) AS n`;
  return `SELECT CASE WHEN coalesce((SELECT k.multi_txs ${keyRow}), 0) = 0 THEN (${sum}) END AS n`;
}
