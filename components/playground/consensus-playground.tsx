"use client";

import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { api, errorMessage } from "@/components/api-client";
import { secretQueryKey } from "@/components/keys/types";
import { FormError } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { CONSENSUS_ENDPOINTS, CONSENSUS_METHODS, type ConsensusMethod } from "@/lib/consensus/catalog";
import { ParamField } from "./param-field";
import { callEndpoint, chargedCu, checkForm, classify, curlCommand, initialValuesByMethod, requestParams, rpcPath } from "./request";
import { KeyStatus, usePlaygroundKey } from "./playground-key";
import { SourceBadge } from "./source-badge";
import { ResponseView, type Exchange } from "./response-view";
import { exampleFor, examplesPath, examplesQueryKey, type PlaygroundNetwork, type RecentExamples } from "./types";

export interface ConsensusPlaygroundProps {
  projectId: string;
  /** Public origin, for the curl command (the browser itself calls the same-origin path). */
  origin: string;
  /** The consensus networks; never empty. */
  networks: PlaygroundNetwork[];
  initialNetwork: string;
  initialMethod: ConsensusMethod;
}

/** While a devnet has produced nothing yet, look again this often. */
const EMPTY_POLL_MS = 3000;


function EndpointPicker({ method, onChange }: { method: ConsensusMethod; onChange: (m: ConsensusMethod) => void }) {
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium text-fg">Endpoint</legend>
      <div className="grid gap-2 sm:grid-cols-2">
        {CONSENSUS_METHODS.map((m) => {
          const e = CONSENSUS_ENDPOINTS[m];
          const checked = m === method;
          return (
            <label
              key={m}
              className={cn(
                "flex cursor-pointer gap-3 rounded-md border px-3 py-2.5 transition-colors",
                checked ? "border-accent bg-accent-soft/60" : "border-line hover:bg-subtle",
              )}
            >
              <input
                type="radio"
                name="pg-endpoint"
                value={m}
                checked={checked}
                onChange={() => onChange(m)}
                aria-labelledby={`pg-endpoint-${m}-title`}
                aria-describedby={`pg-endpoint-${m}-detail`}
                className="mt-1 size-4 shrink-0 accent-accent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-focus"
              />
              <span className="min-w-0 flex-1">
                <span className="flex flex-wrap items-center justify-between gap-x-2">
                  <span className="flex flex-wrap items-baseline gap-x-2">
                    <span id={`pg-endpoint-${m}-title`} className="text-sm font-semibold text-fg">
                      {e.title}
                    </span>
                    <code aria-hidden="true" className="font-mono text-xs text-muted">
                      {m}
                    </code>
                  </span>
                  <Badge tone={checked ? "accent" : "neutral"} aria-hidden="true">
                    {e.cu} CU
                  </Badge>
                </span>
                <span id={`pg-endpoint-${m}-detail`} className="mt-0.5 block text-xs text-muted">
                  <span className="sr-only">
                    Method {m}, {e.cu} compute units per call.{" "}
                  </span>
                  {e.description}
                </span>
              </span>
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}

function shortHash(hash: string): string {
  return hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash;
}

function ExamplesPanel({ network, examples }: { network: PlaygroundNetwork; examples: UseQueryResult<RecentExamples> }) {
  const [manual, setManual] = useState(false);
  const data = examples.data;
  return (
    <section aria-labelledby="pg-examples-title" className="space-y-2 rounded-md border border-line bg-subtle/60 px-4 py-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 id="pg-examples-title" className="text-sm font-semibold text-fg">
          Recent data on {network.displayName}
        </h3>
        <Button
          variant="ghost"
          size="sm"
          pending={manual}
          onClick={() => {
            setManual(true);
            void examples.refetch().finally(() => setManual(false));
          }}
        >
          Refresh examples
        </Button>
      </div>
      {examples.isPending ? (
        <div role="status" aria-label="Loading examples" className="space-y-2">
          <Skeleton className="h-4 w-64 max-w-full" />
          <Skeleton className="h-4 w-96 max-w-full" />
        </div>
      ) : examples.isError ? (
        <FormError>Could not load the examples. {errorMessage(examples.error)}</FormError>
      ) : data?.latestHeight === null ? (
        <div data-testid="examples-empty" className="text-sm text-muted">
          <p className="font-medium text-fg">
            {network.source === "devnet" ? "The devnet has not produced blocks yet." : "No blocks from the upstream node have been stored yet."}
          </p>
          <p>Examples appear here as soon as there are blocks; this checks again every few seconds. Requests can be sent meanwhile.</p>
        </div>
      ) : data ? (
        <dl data-testid="examples" className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
          <dt className="text-muted">Latest height</dt>
          <dd className="font-mono text-fg">{data.latestHeight}</dd>
          <dt className="text-muted">Recent transaction</dt>
          <dd className="font-mono text-fg" title={data.txHash ?? undefined}>
            {data.txHash ? shortHash(data.txHash) : <span className="font-sans text-muted">none in the latest blocks</span>}
          </dd>
          {data.sender ? (
            <>
              <dt className="text-muted">Its sender</dt>
              <dd className="font-mono break-all text-fg">{data.sender}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {data && data.latestHeight !== null ? <p className="text-xs text-muted">Each parameter with an example has a “Use example” button.</p> : null}
    </section>
  );
}

function setUrl(network: string, method: ConsensusMethod) {
  const url = new URL(window.location.href);
  url.searchParams.set("network", network);
  url.searchParams.set("method", method);
  window.history.replaceState(null, "", url);
}

function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === "AbortError";
}

/**
 * The consensus-chain playground: network, endpoint and a form generated from the endpoint
 * catalog; Send calls the public endpoint from this browser with the project's first key.
 */
export function ConsensusPlayground({ projectId, origin, networks, initialNetwork, initialMethod }: ConsensusPlaygroundProps) {
  const queryClient = useQueryClient();
  const [slug, setSlug] = useState(initialNetwork);
  const [method, setMethod] = useState(initialMethod);
  const [valuesByMethod, setValuesByMethod] = useState(initialValuesByMethod);
  const [exchange, setExchange] = useState<Exchange | null>(null);
  const [pending, setPending] = useState(false);
  const seq = useRef(0);
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => () => inFlight.current?.abort(), []);

  const network = networks.find((n) => n.slug === slug) ?? networks[0]!;
  const spec = CONSENSUS_ENDPOINTS[method];
  const values = valuesByMethod[method];
  const form = checkForm(spec, values);
  const path = rpcPath(network.slug, method, requestParams(spec, values));

  const { keys, key, getSecret } = usePlaygroundKey(projectId);

  const examples = useQuery({
    queryKey: examplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<RecentExamples>(examplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (q.state.data?.latestHeight === null ? EMPTY_POLL_MS : false),
  });

  const keyBlocker = keys.isPending ? "Loading your API key…" : !key ? "This project needs an API key to send requests." : null;
  const blocker = form.blocker ?? keyBlocker;
  const canSend = blocker === null;

  function setValue(name: string, value: string) {
    setValuesByMethod((all) => ({ ...all, [method]: { ...all[method], [name]: value } }));
  }

  async function send() {
    if (!canSend || !key) return;
    const mine = ++seq.current;
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    const sent = { seq: mine, networkName: network.displayName, method, path };
    setPending(true);
    try {
      let secret: string;
      try {
        secret = await getSecret();
      } catch (e) {
        throw new Error(`Could not load your API key. ${errorMessage(e)}`);
      }
      const res = await callEndpoint(path, secret, controller.signal);
      // A key reset elsewhere: forget the cached secret so the next Send fetches the new one.
      if (res.status === 401) queryClient.removeQueries({ queryKey: secretQueryKey(projectId, key.id) });
      if (mine !== seq.current) return;
      const outcome = classify(res.status, res.json);
      setExchange({ ...sent, ...res, kind: "response", outcome, cu: chargedCu(spec, outcome) });
    } catch (e) {
      if (mine !== seq.current || isAbort(e)) return;
      setExchange({ ...sent, kind: "failed", message: e instanceof Error ? e.message : "The request failed." });
    } finally {
      if (mine === seq.current) setPending(false);
    }
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void send();
  }

  const maskedCurl = curlCommand(origin, path, key?.masked ?? "<API_KEY>");

  return (
    <div className="space-y-6">
      <Card aria-labelledby="pg-request-title">
        <CardHeader
          titleId="pg-request-title"
          title="Request"
          description="Requests go from this browser to the public endpoint with the project's API key, and are metered like any other call."
        />
        <CardBody>
          <form onSubmit={onSubmit} noValidate className="space-y-6">
            <div className="flex flex-wrap items-end gap-x-4 gap-y-2">
              <div className="w-full space-y-1.5 sm:w-80">
                <Label htmlFor="pg-network">Network</Label>
                <Select
                  id="pg-network"
                  value={network.slug}
                  onChange={(e) => {
                    setSlug(e.target.value);
                    setUrl(e.target.value, method);
                  }}
                >
                  {networks.map((n) => (
                    <option key={n.slug} value={n.slug}>
                      {n.displayName} ({n.slug})
                    </option>
                  ))}
                </Select>
              </div>
              <div className="pb-2.5" data-testid="network-source">
                <SourceBadge network={network} devnetTitle="Served by the built-in devnet, which uses its own chain id" />
              </div>
            </div>

            <EndpointPicker
              method={method}
              onChange={(m) => {
                setMethod(m);
                setUrl(network.slug, m);
              }}
            />

            <ExamplesPanel network={network} examples={examples} />

            <fieldset className="space-y-3">
              <legend className="text-sm font-medium text-fg">
                Parameters of <code className="font-mono">{method}</code>
              </legend>
              {spec.params.length === 0 ? (
                <p className="text-sm text-muted">This endpoint takes no parameters.</p>
              ) : (
                <>
                  {spec.params.some((p) => p.required) ? (
                    <p className="text-xs text-muted">
                      <span aria-hidden="true" className="text-danger-text">
                        *
                      </span>{" "}
                      Required
                    </p>
                  ) : null}
                  <div className="grid gap-x-4 gap-y-5 sm:grid-cols-2">
                    {spec.params.map((p) => (
                      <div key={`${method}-${p.name}`} className={p.type === "query" || p.type === "hash" ? "sm:col-span-2" : undefined}>
                        <ParamField
                          id={`pg-${method}-${p.name}`}
                          spec={p}
                          value={values[p.name] ?? ""}
                          check={form.checks[p.name] ?? { missing: false, error: null, queryError: null }}
                          example={exampleFor(method, p.name, examples.data)}
                          onChange={(v) => setValue(p.name, v)}
                        />
                      </div>
                    ))}
                  </div>
                </>
              )}
            </fieldset>

            <KeyStatus projectId={projectId} keys={keys} />

            <div className="flex flex-wrap items-center gap-3">
              <Button type="submit" disabled={!canSend} pending={pending} aria-describedby="pg-send-note">
                Send
              </Button>
              <p id="pg-send-note" data-testid="send-note" className={cn("text-sm", blocker ? "text-danger-text" : "text-muted")}>
                {blocker ?? `GET ${method} on ${network.displayName} · ${spec.cu} CU when it succeeds, 0 CU on an error`}
              </p>
            </div>
          </form>
        </CardBody>
        <div className="space-y-2 border-t border-line px-5 py-4">
          <div className="flex flex-wrap items-center justify-between gap-2">
            <h3 className="text-sm font-semibold text-fg">curl</h3>
            {form.valid && key ? <CopyButton value={async () => curlCommand(origin, path, await getSecret())} label="Copy as curl" /> : null}
          </div>
          <pre className="overflow-x-auto rounded-md bg-[#0f1420] px-4 py-3 text-[12.5px] leading-relaxed text-slate-200 dark:bg-black/40">
            <code data-testid="curl-command" className="break-all whitespace-pre-wrap">
              {form.valid ? maskedCurl : "Fill in the parameters to get a command."}
            </code>
          </pre>
          {form.valid && key ? <p className="text-xs text-muted">The key is masked here; Copy as curl copies the full key.</p> : null}
        </div>
      </Card>

      <ResponseView exchange={exchange} pending={pending} />
    </div>
  );
}
