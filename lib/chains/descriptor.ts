/**
 * What the browser knows of a chain family: its client descriptor, which each family exports
 * beside its server module (lib/<family>/family.client.ts) and lib/chains/client.ts lists. The
 * console's Overview and playground render any family from it. No server imports: client
 * components load this file and every descriptor (lib/chains/client.test.ts checks it).
 *
 * The descriptors' functions take their family's own types (examples, methods); their parameters
 * are written as methods so that one family's descriptor stands for any (method parameters are
 * compared both ways).
 */
import type { QueryError } from "@/lib/consensus/query/parse";
import type { ParamSpec } from "@/lib/consensus/catalog";

/** What the browser needs about a network (never its upstream URLs, which may hold provider keys). */
export interface ClientNetwork {
  slug: string;
  /** Its family's id (lib/chains/registry.ts). */
  family: string;
  displayName: string;
  /** Path segments of the webhook API and the Aptos read API: `ethereum`, `mainnet`. */
  protocol: string;
  network: string;
  /** The chain id this deployment answers with (a devnet's own). */
  chainId: string;
  source: "devnet" | "upstream";
  currency: string;
  /** Whether the network has webhooks (some event type). */
  webhooks: boolean;
}

/** One URL of a network on the Overview. */
export interface EndpointEntry {
  label: string;
  /** The URL; a function when the URL holds the API key (shown masked until revealed, copied in full). */
  url: string | ((key: string) => string);
  copyLabel: string;
}

/**
 * One API's URL twice: with the key in the X-API-KEY header (`header`), and with the key in the
 * path (`withKey`), for clients that take only a URL. `name`: "Node"; `what`: "node URL".
 */
export function headerAndPathUrls(network: ClientNetwork, name: string, what: string, header: string, withKey: (key: string) => string): EndpointEntry[] {
  return [
    { label: `${name} (header)`, url: header, copyLabel: `Copy ${network.displayName} ${what}` },
    { label: `${name} (key in path)`, url: withKey, copyLabel: `Copy ${network.displayName} ${what} with key` },
  ];
}

export interface ClientFamily {
  /** The family's id, as networks name it (`family`). */
  id: string;
  /** The family in a sentence: "EVM", "Aptos". */
  label: string;
  overview: {
    /** Heading of the family's networks on the Overview, and the sentence under it. */
    title: string;
    description: string;
    /** The URLs of one of its networks, besides the webhook API's (listed for every network with webhooks). */
    endpoints(network: ClientNetwork, origin: string): EndpointEntry[];
    /** A first request to paste, shown on the Overview for the first network of the first family that has one. */
    quickStart?: {
      /** "Ask <network> …": what the request asks for. */
      asks: string;
      command(origin: string, network: ClientNetwork, key: string): string;
    };
  };
  /** The family's tab of the playground; none: no tab. */
  playground?: PlaygroundDescriptor;
}

// ---------------------------------------------------------------------------------------------
// The playground

/** A request to a public endpoint of this deployment. */
export interface PlaygroundRequest {
  method: "GET" | "POST";
  /** Path on the public origin, such as `/rpc/babylon-mainnet/block`. */
  path: string;
  /** Query-string parameters, in order; encoded by requestUrl. */
  query?: ReadonlyArray<readonly [string, string]>;
  /** Headers besides the key, such as a body's Content-Type. */
  headers?: Readonly<Record<string, string>>;
  body?: string;
  /**
   * How the endpoint answers: a JSON-RPC envelope (the default), or a REST body that is the result
   * itself on success and `{ message, error_code }` on an error (the Aptos read API).
   */
  answers?: "jsonrpc" | "rest";
}

/**
 * encodeURIComponent, plus the characters it leaves alone that a shell or a strict server could
 * misread: a query's single quotes must not end the single-quoted URL of a curl command.
 */
export function encodeParam(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** One method (endpoint, route) of the picker, with its CU from the family's catalog. */
export interface MethodChoice {
  method: string;
  /** A title in words, shown before the method's name; without one the name is the title. */
  title?: string;
  description: string;
  cu: number;
}

/** Values as typed, by parameter name. */
export type ParamValues = Record<string, string>;

/** What a field shows about its value. */
export interface FieldCheck {
  /** A required parameter without a value (not shown as an error: Send says what is missing). */
  missing: boolean;
  error: string | null;
  /** A query's parse error, over the text the endpoint reads, which starts at `start` in the field. */
  query: { error: QueryError; text: string; start: number } | null;
}

export interface FormCheck {
  checks: Record<string, FieldCheck>;
  /** Why Send is disabled, for the sentence beside it; null when the request can be sent. */
  blocker: string | null;
  /** What the call costs: the catalog's CU (for a search, with its per-condition part). */
  cu: number;
}

/** "a", "a and b", "a, b and c". */
export function list(names: string[]): string {
  return names.length === 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1) ?? ""}`;
}

/** The form's blocker from the names of the fields that are invalid or missing. */
export function blockerOf(invalid: string[], missing: string[]): string | null {
  return invalid.length > 0 ? `Fix ${list(invalid)} to send.` : missing.length > 0 ? `Enter ${list(missing)} to send.` : null;
}

/** A long value (a hash, an address) cut to its start and end when longer than `max` characters. */
export function abbreviate(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, 10)}…${value.slice(-8)}` : value;
}

/** An example value for one parameter, with the words that say where it comes from. */
export interface ParamExample {
  value: string;
  description: string;
}

/** A parameter of a form: the field the playground shows for it. */
export interface FormField {
  spec: ParamSpec;
  /** Takes the form's whole width (hashes, queries, addresses). */
  wide: boolean;
  /** The type and limits in words, instead of the one derived from `spec`. */
  summary?: string;
  placeholder?: string;
}

/** Parameters as a form of fields, each checked as the endpoint would read it. */
export interface FormEditor {
  kind: "form";
  /** "Parameters of <legend>": the method, or what the route is called. */
  legend(method: string): string;
  /** Said instead of the fields when there are none. */
  noParams: string;
  fields(method: string): readonly FormField[];
  /** A field's value until it is edited (a select's default, an example). */
  initial(method: string, field: FormField, examples: unknown): string;
  check(method: string, values: ParamValues): FormCheck;
  request(network: ClientNetwork, method: string, values: ParamValues): PlaygroundRequest;
  example(method: string, param: string, examples: unknown): ParamExample | null;
}

/** The form's values: the edited ones, else each field's initial value. */
export function formValues(editor: FormEditor, method: string, edits: ParamValues | undefined, examples: unknown): ParamValues {
  return Object.fromEntries(editor.fields(method).map((f) => [f.spec.name, edits?.[f.spec.name] ?? editor.initial(method, f, examples)]));
}

/** Positional JSON-RPC params as JSON text, from a template filled with the chain's values. */
export interface JsonParamsEditor {
  kind: "json";
  template(method: string, examples: unknown): unknown[];
  request(network: ClientNetwork, method: string, params: unknown[]): PlaygroundRequest;
  cu(method: string): number;
}

export const formatParams = (params: unknown[]): string => (params.length === 0 ? "[]" : JSON.stringify(params, null, 2));

export type ParamsCheck = { ok: true; params: unknown[] } | { ok: false; error: string };

/**
 * The params text must be JSON and an array. A JSON-RPC endpoint may also take params by name (an
 * object), but Ethereum nodes take positional params only, and the templates are arrays.
 */
export function checkParams(text: string): ParamsCheck {
  if (text.trim() === "") return { ok: false, error: "Enter the params as a JSON array, such as []." };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!Array.isArray(parsed)) return { ok: false, error: "The params must be a JSON array, such as [] or [\"latest\", false]." };
  return { ok: true, params: parsed };
}

/** One row of the values read from the chain. */
export interface ExampleRow {
  term: string;
  value: string;
  /** "mono" (the default), "wrap" (monospace, broken anywhere: addresses), "muted" (words, not data). */
  look?: "mono" | "wrap" | "muted";
  /** Shown on hover (a shortened value in full). */
  title?: string;
  testId?: string;
}

export type ExamplesView = { empty: { testId: string; title: string; body: string } } | { testId: string; rows: ExampleRow[]; note: string };

/** Text with code in it: `["a", { code: "/rpc" }, " b"]`. */
export type RichText = ReadonlyArray<string | { code: string }>;

/** A snippet after the curl command, which repeats the request (or names a URL) with the key in it. */
export interface SnippetDescriptor {
  title: string;
  testId: string;
  copyLabel: string;
  /** The snippet; `input` is the form's values or the params, null while they cannot be sent (null: the placeholder). */
  text(context: { origin: string; network: ClientNetwork; method: string; key: string; input: unknown }): string | null;
  note?: RichText;
  noteTestId?: string;
}

/** A card of settings for a network (a wallet's), below the response. */
export interface SettingsDescriptor {
  /** Part of the card's ids: `<idPrefix>-<id>-title`. */
  id: string;
  title: string;
  description: string;
  testId: string;
  rows(network: ClientNetwork): SettingsRow[];
}

export type SettingsRow =
  | { term: string; value: string; mono?: boolean; testId?: string; detail?: string; note?: string }
  /** A URL holding the key: masked until revealed, with Reveal, Hide and Copy. */
  | { term: string; keyUrl: { url(origin: string, network: ClientNetwork, key: string): string; testId: string; copyLabel: string } };

export interface PlaygroundDescriptor {
  /** The tab's name. */
  tab: string;
  /** Prefix of the element ids, unique on the page. */
  idPrefix: string;
  /** Under the request card's title. */
  description: string;
  /** The source badge's tooltip on a devnet. */
  devnetTitle: string;
  /** What the choices are called: "Endpoint", "Method", "Route". */
  legend: string;
  columns: 2 | 3;
  choices: readonly MethodChoice[];
  /** The method a tab starts with: one that needs no parameter and answers before the chain has data. */
  firstMethod: string;
  examples: {
    title(network: ClientNetwork): string;
    refreshLabel: string;
    loading(network: ClientNetwork): { label: string; note?: string };
    /** Said before the error's own message when the values cannot be loaded. */
    errorLead: string;
    /** Whether to look again in a few seconds (the chain has not produced what the examples need yet). */
    poll(data: unknown, network: ClientNetwork): boolean;
    view(data: unknown, network: ClientNetwork): ExamplesView;
  };
  editor: FormEditor | JsonParamsEditor;
  /** Shown instead of a snippet while the form cannot make a request. */
  snippetPlaceholder: string;
  snippets?: readonly SnippetDescriptor[];
  settings?: SettingsDescriptor;
}
