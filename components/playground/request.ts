/**
 * What the playground's fields show, free of React: where a query's parse error is, and a
 * parameter's type and limits in words.
 */
import { HASH_HEX_DIGITS } from "@/lib/consensus/params";
import { MAX_QUERY_LENGTH } from "@/lib/consensus/query/parse";
import type { ParamSpec } from "@/lib/consensus/catalog";

export interface QueryExcerpt {
  /** Text before the offending character, from the start of the excerpt. */
  before: string;
  /** The character at the offset; empty at the end of the query. */
  at: string;
  after: string;
  /** Characters shown before the caret (the caret sits under `at`). */
  column: number;
}

const EXCERPT_RADIUS = 40;

/** A window of the query around an error offset, with whitespace made single-width so the caret lines up. */
export function queryExcerpt(query: string, offset: number): QueryExcerpt {
  const clamp = Math.max(0, Math.min(offset, query.length));
  const start = Math.max(0, clamp - EXCERPT_RADIUS);
  const end = Math.min(query.length, clamp + 1 + EXCERPT_RADIUS);
  const flat = (s: string) => s.replace(/[\t\n\r]/g, " ");
  const before = (start > 0 ? "…" : "") + flat(query.slice(start, clamp));
  const at = flat(query.slice(clamp, clamp + 1));
  const after = flat(query.slice(clamp + 1, end)) + (end < query.length ? "…" : "");
  return { before, at, after, column: Array.from(before).length };
}

/** A short human description of a parameter's type and limits, from the catalog. */
export function typeSummary(p: ParamSpec): string {
  const parts: string[] = [];
  switch (p.type) {
    case "height":
      parts.push("integer ≥ 1");
      break;
    case "int":
      parts.push(p.max !== undefined ? `integer 1–${p.max}` : "integer ≥ 1");
      break;
    case "query":
      parts.push(`query, at most ${MAX_QUERY_LENGTH} characters`);
      break;
    case "hash":
      parts.push(`hex, ${HASH_HEX_DIGITS} digits`);
      break;
    case "bool":
      parts.push("true or false");
      break;
    case "order":
      parts.push("asc or desc");
      break;
  }
  if (p.default !== undefined) parts.push(`default ${p.default}`);
  parts.push(p.required ? "required" : "optional");
  return parts.join(" · ");
}
