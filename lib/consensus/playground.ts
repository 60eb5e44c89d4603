/**
 * The consensus family's playground tab, free of React: the values of an endpoint's form, checked
 * with the endpoint's own rules (lib/consensus/params.ts), the request they make, and the examples
 * each parameter gets from the network's recent data.
 */
import { blockerOf, type FieldCheck, type FormCheck, type ParamExample, type ParamValues, type PlaygroundRequest } from "@/lib/chains/descriptor";
import { callCu, type ConsensusMethod, type EndpointSpec, type ParamSpec } from "./catalog";
import type { RecentExamples } from "./examples";
import { checkParam, paramText } from "./params";
import type { Query } from "./query/parse";

const FINE: FieldCheck = { missing: false, error: null, query: null };

/** A parameter's value before it is edited: empty, except selects and toggles, which show their default. */
export function initialValue(p: ParamSpec): string {
  return p.type === "order" || p.type === "bool" ? (p.default ?? "") : "";
}

/** The first values of an endpoint's form. */
export function initialValues(spec: EndpointSpec): ParamValues {
  return Object.fromEntries(spec.params.map((p) => [p.name, initialValue(p)]));
}

const sentence = (message: string) => `${message}.`;

/**
 * Checks a value with the endpoint's rules, so that a request that cannot succeed is not sent; an
 * integer outside the catalog's range is refused too, although the endpoint would read it.
 */
export function checkField(spec: ParamSpec, value: string): FieldCheck {
  const check = checkParam(spec, value);
  switch (check.kind) {
    case "absent":
      return FINE;
    case "missing":
      return { ...FINE, missing: true };
    case "invalid": {
      const query = check.queryError ? { error: check.queryError, ...paramText(value) } : null;
      return { ...FINE, error: sentence(check.message), query };
    }
    case "valid":
      return check.outside === undefined ? FINE : { ...FINE, error: sentence(check.outside) };
  }
}

/** The form's checks, what blocks Send, and what the call costs (a search's CU with its query's conditions). */
export function checkForm(spec: EndpointSpec, values: ParamValues): FormCheck {
  const checks: Record<string, FieldCheck> = {};
  const missing: string[] = [];
  const invalid: string[] = [];
  let query: Query | undefined;
  for (const p of spec.params) {
    const value = values[p.name] ?? "";
    if (p.type === "query") {
      const parsed = checkParam(p, value);
      if (parsed.kind === "valid" && parsed.value.type === "query") query = parsed.value.value;
    }
    const check = checkField(p, value);
    checks[p.name] = check;
    if (check.missing) missing.push(p.name);
    if (check.error) invalid.push(p.name);
  }
  return { checks, blocker: blockerOf(invalid, missing), cu: callCu(spec.method, query) };
}

/**
 * The parameters to send, in catalog order: typed values (trimmed, except a query, sent as typed),
 * and selects or toggles only when they differ from the default.
 */
export function requestParams(spec: EndpointSpec, values: ParamValues): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const p of spec.params) {
    const raw = values[p.name] ?? "";
    if (paramText(raw).text === "") continue;
    if ((p.type === "order" || p.type === "bool") && raw === p.default) continue;
    out.push([p.name, p.type === "query" ? raw : raw.trim()]);
  }
  return out;
}

/** `GET /rpc/<slug>/<method>?<params>` on the public origin. */
export function consensusRequest(slug: string, method: ConsensusMethod, params: Array<[string, string]>): PlaygroundRequest {
  return { method: "GET", path: `/rpc/${slug}/${method}`, query: params };
}

/** The example for a parameter of an endpoint, from the network's recent data. */
export function exampleFor(method: ConsensusMethod, param: string, ex: RecentExamples | undefined): ParamExample | null {
  if (!ex) return null;
  const h = ex.latestHeight;
  switch (param) {
    case "height":
      return h === null ? null : { value: String(h), description: "latest height" };
    case "hash":
      return ex.txHash === null ? null : { value: ex.txHash, description: "a recent transaction" };
    case "query":
      if (method === "block_search") {
        if (h === null) return null;
        const from = Math.max(1, h - 9);
        return { value: `block.height >= ${from} AND block.height <= ${h}`, description: "latest ten blocks" };
      }
      return ex.query === null ? null : { value: ex.query, description: ex.sender ? "a recent sender" : "a recent block" };
    default:
      return null;
  }
}
