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
import { controlClasses, Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import {
  checkParams,
  EVM_METHOD_DESCRIPTIONS,
  EVM_PLAYGROUND_METHODS,
  evmCu,
  evmCurlCommand,
  evmExamplesPath,
  evmExamplesQueryKey,
  evmTemplate,
  formatParams,
  nodePath,
  requestBody,
  viemSnippet,
  walletRpcUrl,
  type EvmExamples,
  type EvmPlaygroundMethod,
  type EvmPlaygroundNetwork,
} from "./evm-request";
import { EvmWalletSettings } from "./evm-wallet-settings";
import { callEndpoint, chargedCu, classify } from "./request";
import { KeyStatus, usePlaygroundKey } from "./playground-key";
import { SourceBadge } from "./source-badge";
import { ResponseView, type Exchange } from "./response-view";

export interface EvmPlaygroundProps {
  projectId: string;
  /** Public origin, for the snippets (the browser itself calls the same-origin path). */
  origin: string;
  /** The EVM networks; never empty. */
  networks: EvmPlaygroundNetwork[];
  initialNetwork: string;
  initialMethod: EvmPlaygroundMethod;
}

/** While a devnet's token is not deployed yet, look again this often. */
const NO_TOKEN_POLL_MS = 3000;


function MethodPicker({ method, onChange }: { method: EvmPlaygroundMethod; onChange: (m: EvmPlaygroundMethod) => void }) {
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium text-fg">Method</legend>
      <div className="grid gap-2 sm:grid-cols-2 lg:grid-cols-3">
        {EVM_PLAYGROUND_METHODS.map((m) => {
          const checked = m === method;
          const cu = evmCu(m);
          return (
            <label
              key={m}
              className={cn(
                "flex cursor-pointer gap-3 rounded-md border px-3 py-2 transition-colors",
                checked ? "border-accent bg-accent-soft/60" : "border-line hover:bg-subtle",
              )}
            >
              <input
                type="radio"
                name="pg-evm-method"
                value={m}
                checked={checked}
                onChange={() => onChange(m)}
                aria-labelledby={`pg-evm-method-${m}-title`}
                aria-describedby={`pg-evm-method-${m}-detail`}
                className="mt-1 size-4 shrink-0 accent-accent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-focus"
              />
              <span className="min-w-0 flex-1">
                <span className="flex flex-wrap items-center justify-between gap-x-2">
                  <code id={`pg-evm-method-${m}-title`} className="font-mono text-[13px] font-semibold text-fg">
                    {m}
                  </code>
                  <Badge tone={checked ? "accent" : "neutral"} aria-hidden="true">
                    {cu} CU
                  </Badge>
                </span>
                <span id={`pg-evm-method-${m}-detail`} className="mt-0.5 block text-xs text-muted">
                  <span className="sr-only">{cu} compute units per call. </span>
                  {EVM_METHOD_DESCRIPTIONS[m]}
                </span>
              </span>
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}

function short(v: string): string {
  return v.length > 22 ? `${v.slice(0, 10)}…${v.slice(-8)}` : v;
}

function ExamplesPanel({ network, examples }: { network: EvmPlaygroundNetwork; examples: UseQueryResult<EvmExamples> }) {
  const [manual, setManual] = useState(false);
  const data = examples.data;
  return (
    <section aria-labelledby="pg-evm-examples-title" className="space-y-2 rounded-md border border-line bg-subtle/60 px-4 py-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 id="pg-evm-examples-title" className="text-sm font-semibold text-fg">
          Values from {network.displayName}
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
          Refresh values
        </Button>
      </div>
      {examples.isPending ? (
        <div role="status" aria-label="Loading values from the chain" className="space-y-2">
          <Skeleton className="h-4 w-64 max-w-full" />
          <Skeleton className="h-4 w-96 max-w-full" />
          {network.source === "devnet" ? <p className="text-xs text-muted">The devnet starts on first use; this can take a few seconds.</p> : null}
        </div>
      ) : examples.isError ? (
        <FormError>Could not read values from the chain. {errorMessage(examples.error)}</FormError>
      ) : data ? (
        <dl data-testid="evm-examples" className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
          <dt className="text-muted">Latest block</dt>
          <dd className="font-mono text-fg">{data.latestBlock ? `${BigInt(data.latestBlock.number).toString()} (${data.latestBlock.number})` : "—"}</dd>
          <dt className="text-muted">Recent transaction</dt>
          <dd className="font-mono text-fg" title={data.txHash ?? undefined}>
            {data.txHash ? short(data.txHash) : <span className="font-sans text-muted">none in the latest blocks</span>}
          </dd>
          {data.token ? (
            <>
              <dt className="text-muted">Token ({data.token.symbol})</dt>
              <dd className="font-mono break-all text-fg">{data.token.address}</dd>
              <dt className="text-muted">Holder</dt>
              <dd className="font-mono break-all text-fg">{data.token.holder}</dd>
            </>
          ) : network.source === "devnet" ? (
            <>
              <dt className="text-muted">Token</dt>
              <dd data-testid="evm-token-pending" className="text-muted">
                Not deployed yet; the devnet&apos;s traffic generator deploys it shortly. This checks again every few seconds.
              </dd>
            </>
          ) : data.account ? (
            <>
              <dt className="text-muted">An address</dt>
              <dd className="font-mono break-all text-fg">{data.account} (latest block&apos;s miner)</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {data ? <p className="text-xs text-muted">The params below are filled from these values until you edit them.</p> : null}
    </section>
  );
}

function setUrl(network: string, method: EvmPlaygroundMethod) {
  const url = new URL(window.location.href);
  url.searchParams.set("network", network);
  url.searchParams.set("method", method);
  window.history.replaceState(null, "", url);
}

function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === "AbortError";
}

/** Edited params, by network and method; a method without an entry shows its template. */
type Edits = Record<string, string>;
const editKey = (network: string, method: string) => `${network} ${method}`;

/**
 * The EVM JSON-RPC playground: network, method and a JSON params editor pre-filled from the
 * chain; Send posts the request to the public node endpoint from this browser with the project's first key.
 */
export function EvmPlayground({ projectId, origin, networks, initialNetwork, initialMethod }: EvmPlaygroundProps) {
  const queryClient = useQueryClient();
  const [slug, setSlug] = useState(initialNetwork);
  const [method, setMethod] = useState(initialMethod);
  const [edits, setEdits] = useState<Edits>({});
  const [exchange, setExchange] = useState<Exchange | null>(null);
  const [pending, setPending] = useState(false);
  const seq = useRef(0);
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => () => inFlight.current?.abort(), []);

  const network = networks.find((n) => n.slug === slug) ?? networks[0]!;
  const cu = evmCu(method);

  const { keys, key, getSecret } = usePlaygroundKey(projectId);

  const examples = useQuery({
    queryKey: evmExamplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<EvmExamples>(evmExamplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (network.source === "devnet" && q.state.data && q.state.data.token === null ? NO_TOKEN_POLL_MS : false),
  });

  const edited = edits[editKey(network.slug, method)];
  const template = formatParams(evmTemplate(method, examples.data));
  const text = edited ?? template;
  const check = checkParams(text);
  const body = check.ok ? requestBody(method, check.params) : null;

  const keyBlocker = keys.isPending ? "Loading your API key…" : !key ? "This project needs an API key to send requests." : null;
  const blocker = check.ok ? keyBlocker : "Fix the params to send.";
  const canSend = blocker === null;

  async function send() {
    if (!canSend || !key || body === null) return;
    const mine = ++seq.current;
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    const path = nodePath(network.slug);
    const sent = { seq: mine, networkName: network.displayName, method, path, httpMethod: "POST" };
    setPending(true);
    try {
      let secret: string;
      try {
        secret = await getSecret();
      } catch (e) {
        throw new Error(`Could not load your API key. ${errorMessage(e)}`);
      }
      const res = await callEndpoint(path, secret, controller.signal, body);
      // A key reset elsewhere: forget the cached secret so the next Send fetches the new one.
      if (res.status === 401) queryClient.removeQueries({ queryKey: secretQueryKey(projectId, key.id) });
      if (mine !== seq.current) return;
      const outcome = classify(res.status, res.json);
      setExchange({ ...sent, ...res, kind: "response", outcome, cu: chargedCu({ cu }, outcome) });
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

  const maskedKey = key?.masked ?? "<API_KEY>";
  const viemParams = check.ok ? check.params : [];

  return (
    <div className="space-y-6">
      <Card aria-labelledby="pg-evm-request-title">
        <CardHeader
          titleId="pg-evm-request-title"
          title="Request"
          description="JSON-RPC 2.0 requests go from this browser to the public node endpoint with the project's API key, and are metered like any other call."
        />
        <CardBody>
          <form onSubmit={onSubmit} noValidate className="space-y-6">
            <div className="flex flex-wrap items-end gap-x-4 gap-y-2">
              <div className="w-full space-y-1.5 sm:w-80">
                <Label htmlFor="pg-evm-network">Network</Label>
                <Select
                  id="pg-evm-network"
                  value={network.slug}
                  onChange={(e) => {
                    setSlug(e.target.value);
                    setUrl(e.target.value, method);
                  }}
                >
                  {networks.map((n) => (
                    <option key={n.slug} value={n.slug}>
                      {n.displayName} ({n.slug}) · {n.source === "devnet" ? "devnet" : "upstream"}
                    </option>
                  ))}
                </Select>
              </div>
              <div className="pb-2.5" data-testid="network-source">
                <SourceBadge network={network} devnetTitle="Served by a built-in anvil devnet, which uses its own chain id" />
              </div>
            </div>

            <MethodPicker
              method={method}
              onChange={(m) => {
                setMethod(m);
                setUrl(network.slug, m);
              }}
            />

            <ExamplesPanel network={network} examples={examples} />

            <div className="space-y-1.5">
              <div className="flex flex-wrap items-end justify-between gap-2">
                <Label htmlFor="pg-evm-params">
                  Params of <code className="font-mono">{method}</code> (JSON array)
                </Label>
                {edited !== undefined ? (
                  <Button
                    variant="ghost"
                    size="sm"
                    onClick={() =>
                      setEdits((all) => {
                        const next = { ...all };
                        delete next[editKey(network.slug, method)];
                        return next;
                      })
                    }
                  >
                    Reset to template
                  </Button>
                ) : null}
              </div>
              <textarea
                id="pg-evm-params"
                value={text}
                onChange={(e) => {
                  const value = e.target.value;
                  setEdits((all) => ({ ...all, [editKey(network.slug, method)]: value }));
                }}
                spellCheck={false}
                autoCapitalize="off"
                autoComplete="off"
                rows={Math.min(14, Math.max(3, text.split("\n").length + 1))}
                aria-invalid={check.ok ? undefined : true}
                aria-describedby={check.ok ? "pg-evm-params-hint" : "pg-evm-params-error pg-evm-params-hint"}
                className={cn(controlClasses, "h-auto py-2 font-mono text-[12.5px] leading-relaxed")}
              />
              {check.ok ? null : (
                <p id="pg-evm-params-error" data-testid="params-error" className="text-sm text-danger-text">
                  {check.error}
                </p>
              )}
              <p id="pg-evm-params-hint" className="text-xs text-muted">
                Positional JSON-RPC params; {edited === undefined ? "filled from the chain's values above." : "edited by you."}
              </p>
            </div>

            <KeyStatus projectId={projectId} keys={keys} />

            <div className="flex flex-wrap items-center gap-3">
              <Button type="submit" disabled={!canSend} pending={pending} aria-describedby="pg-evm-send-note">
                Send
              </Button>
              <p id="pg-evm-send-note" data-testid="send-note" className={cn("text-sm", blocker ? "text-danger-text" : "text-muted")}>
                {blocker ?? `POST ${method} on ${network.displayName} · ${cu} CU when it succeeds, 0 CU on an error`}
              </p>
            </div>
          </form>
        </CardBody>
        <div className="space-y-4 border-t border-line px-5 py-4">
          <Snippet
            title="curl"
            testId="curl-command"
            text={body === null ? null : evmCurlCommand(origin, network.slug, maskedKey, body)}
            copy={body !== null && key ? { label: "Copy as curl", value: async () => evmCurlCommand(origin, network.slug, await getSecret(), body) } : null}
          />
          <Snippet
            title="viem"
            testId="viem-snippet"
            text={body === null ? null : viemSnippet(walletRpcUrl(origin, network.slug, maskedKey), method, viemParams)}
            copy={
              body !== null && key
                ? { label: "Copy as viem", value: async () => viemSnippet(walletRpcUrl(origin, network.slug, await getSecret()), method, viemParams) }
                : null
            }
          />
          {body !== null && key ? <p className="text-xs text-muted">The key is masked here; the Copy buttons copy the full key.</p> : null}
        </div>
      </Card>

      <ResponseView exchange={exchange} pending={pending} />

      <EvmWalletSettings projectId={projectId} origin={origin} network={network} keyItem={key} />
    </div>
  );
}

function Snippet({ title, testId, text, copy }: { title: string; testId: string; text: string | null; copy: { label: string; value: () => Promise<string> } | null }) {
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold text-fg">{title}</h3>
        {copy ? <CopyButton value={copy.value} label={copy.label} /> : null}
      </div>
      <pre className="overflow-x-auto rounded-md bg-[#0f1420] px-4 py-3 text-[12.5px] leading-relaxed text-slate-200 dark:bg-black/40">
        <code data-testid={testId} className="break-all whitespace-pre-wrap">
          {text ?? "Fix the params to get a snippet."}
        </code>
      </pre>
    </div>
  );
}
