/**
 * Input checked against a zod schema, refused as the API answers bad input: one 400 naming the
 * first problem. Every route, service and server action that parses input goes through here; what
 * differs between them is only how a field's name and its problem make one message (the schemas'
 * messages are written for one way or the other), given as a Wording.
 */
import type { z } from "zod";
import { AppError } from "@/lib/errors";

export type InputErrorCode = "MISSING_REQUIRED_PARAMETER" | "INVALID_PARAMETER" | "WRONG_RANGE_PARAMETER";

/** How an input's problems are put into words. */
export interface Wording {
  /** The message for a problem (`message`, from the schema) with the field at `path` ("" for the input as a whole). */
  problem(path: string, message: string): string;
  /** The message for fields (or parameters) the schema does not know. */
  unknown(names: readonly string[]): string;
  /** Whether a field that is absent is MISSING_REQUIRED_PARAMETER; false: INVALID_PARAMETER like any other problem. */
  missing: boolean;
}

/** Unknown names are echoed back at most this long. */
const NAME_CHARS = 40;

const notKnown = (names: readonly string[]) =>
  `${names.join(", ")} ${names.length === 1 ? "is not a known field" : "are not known fields"}: remove ${names.length === 1 ? "it" : "them"}.`;

/** The console's forms and bodies: `name: Enter a key name`; a problem with the whole input is its message alone. */
export const FIELDS: Wording = { problem: (path, message) => (path ? `${path}: ${message}` : message), unknown: notKnown, missing: true };

/** The webhook API, whose messages follow the field (`condition.topics[1] must be a topic …`). */
export const SENTENCES: Wording = { problem: (path, message) => `${path || "The request body"} ${message}.`, unknown: notKnown, missing: true };

/** The schema's message alone: a form that shows one message for all its fields (sign-in). */
export const MESSAGE_ONLY: Wording = { ...FIELDS, problem: (_path, message) => message };

/** Query parameters, named as FIELDS names them; an unknown one is answered with the ones there are. */
function parameters(known: readonly string[]): Wording {
  return { ...FIELDS, unknown: (names) => `Unknown parameter ${names.join(", ")}: ${known.length > 0 ? `use ${known.join(", ")}` : "this endpoint takes none"}` };
}

/** `condition.topics[1]`: a field's path as messages name it. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/**
 * One zod issue as `{ code, message }`: a field that is absent is MISSING_REQUIRED_PARAMETER (when
 * the wording tells it apart), a refinement that says so (`params: { code: "WRONG_RANGE_PARAMETER" }`)
 * WRONG_RANGE_PARAMETER, anything else INVALID_PARAMETER.
 */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown, wording: Wording = FIELDS): { code: InputErrorCode; message: string } {
  const where = fieldPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    const names = issue.keys.map((k) => (where ? `${where}.${k.slice(0, NAME_CHARS)}` : k.slice(0, NAME_CHARS)));
    return { code: "INVALID_PARAMETER", message: wording.unknown(names) };
  }
  const range = (issue as { params?: { code?: string } }).params?.code === "WRONG_RANGE_PARAMETER";
  const missing = wording.missing && where !== "" && valueAt(input, issue.path) === undefined;
  return { code: range ? "WRONG_RANGE_PARAMETER" : missing ? "MISSING_REQUIRED_PARAMETER" : "INVALID_PARAMETER", message: wording.problem(where, issue.message) };
}

/** The 400 for input a schema refused: its first problem. */
export function inputError(error: z.ZodError, input: unknown, wording: Wording = FIELDS): AppError {
  // zod reports at least one issue for a failed parse.
  const { code, message } = describeIssue(error.issues[0]!, input, wording);
  return new AppError(code, message);
}

/** Validates input with a schema: its output, or a 400 (AppError) naming the first problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, wording: Wording = FIELDS): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw inputError(parsed.error, input, wording);
}

/** Query parameters (queryInput) checked against an object schema, which says which parameters there are. */
export function parseQuery<S extends z.ZodObject>(schema: S, params: Record<string, string>): z.output<S> {
  return parseInput(schema, params, parameters(Object.keys(schema.shape)));
}

/** Query parameters as an object of strings, for a schema to check; a parameter given twice is refused. */
export function queryInput(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) {
    if (Object.hasOwn(out, k)) throw new AppError("INVALID_PARAMETER", `${k.slice(0, 64)} is given more than once: give it once.`);
    out[k] = v;
  }
  return out;
}
