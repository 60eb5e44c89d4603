"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { controlClasses } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { EVM_METHOD_SUMMARIES } from "@/lib/evm/methods";
import {
  checkParams,
  EVM_PLAYGROUND_METHODS,
  evmCu,
  evmRequest,
  evmTemplate,
  formatParams,
  viemSnippet,
  walletRpcUrl,
  type EvmExamples,
  type EvmPlaygroundMethod,
  type EvmPlaygroundNetwork,
} from "./evm-request";
import { EvmWalletSettings } from "./evm-wallet-settings";
import { ExamplesFrame } from "./examples-frame";
import { RequestPicker, usePick } from "./picker";
import { RequestCard, Snippet } from "./request-card";
import { ResponseView } from "./response-view";
import { examplesPath, examplesQueryKey } from "./types";
import { usePlaygroundSend } from "./use-send";

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

const CHOICES = EVM_PLAYGROUND_METHODS.map((m) => ({ method: m, description: EVM_METHOD_SUMMARIES[m], cu: evmCu(m) }));

function short(v: string): string {
  return v.length > 22 ? `${v.slice(0, 10)}…${v.slice(-8)}` : v;
}

function ChainValues({ network, data }: { network: EvmPlaygroundNetwork; data: EvmExamples }) {
  return (
    <>
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
      <p className="text-xs text-muted">The params below are filled from these values until you edit them.</p>
    </>
  );
}

/** Edited params, by network and method; a method without an entry shows its template. */
type Edits = Record<string, string>;
const editKey = (network: string, method: string) => `${network} ${method}`;

/**
 * The EVM JSON-RPC playground: network, method and a JSON params editor pre-filled from the
 * chain; Send posts the request to the public node endpoint from this browser with the project's first key.
 */
export function EvmPlayground({ projectId, origin, networks, initialNetwork, initialMethod }: EvmPlaygroundProps) {
  const pick = usePick(networks, initialNetwork, initialMethod);
  const { network, method } = pick;
  const [edits, setEdits] = useState<Edits>({});
  const sender = usePlaygroundSend(projectId);
  const { key, getSecret } = sender;
  const cu = evmCu(method);

  const examples = useQuery({
    queryKey: examplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<EvmExamples>(examplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (network.source === "devnet" && q.state.data && q.state.data.token === null ? NO_TOKEN_POLL_MS : false),
  });

  const edited = edits[editKey(network.slug, method)];
  const template = formatParams(evmTemplate(method, examples.data));
  const text = edited ?? template;
  const check = checkParams(text);
  const request = check.ok ? evmRequest(network.slug, method, check.params) : null;
  const maskedKey = key?.masked ?? "<API_KEY>";

  return (
    <div className="space-y-6">
      <RequestCard
        idPrefix="pg-evm"
        projectId={projectId}
        description="JSON-RPC 2.0 requests go from this browser to the public node endpoint with the project's API key, and are metered like any other call."
        sender={sender}
        ready={request ? { request } : { blocker: "Fix the params to send." }}
        about={{ networkName: network.displayName, method, cu }}
        origin={origin}
        snippetPlaceholder="Fix the params to get a snippet."
        moreSnippets={
          <Snippet
            title="viem"
            testId="viem-snippet"
            text={check.ok ? viemSnippet(walletRpcUrl(origin, network.slug, maskedKey), method, check.params) : null}
            placeholder="Fix the params to get a snippet."
            copy={
              check.ok && key
                ? { label: "Copy as viem", value: async () => viemSnippet(walletRpcUrl(origin, network.slug, await getSecret()), method, check.params) }
                : null
            }
          />
        }
      >
        <RequestPicker idPrefix="pg-evm" pick={pick} devnetTitle="Served by a built-in anvil devnet, which uses its own chain id" legend="Method" choices={CHOICES} columns={3} />

        <ExamplesFrame
          idPrefix="pg-evm"
          title={`Values from ${network.displayName}`}
          refreshLabel="Refresh values"
          examples={examples}
          loading={{ label: "Loading values from the chain", note: network.source === "devnet" ? "The devnet starts on first use; this can take a few seconds." : undefined }}
          errorLead="Could not read values from the chain."
        >
          {(data) => <ChainValues network={network} data={data} />}
        </ExamplesFrame>

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
      </RequestCard>

      <ResponseView exchange={sender.exchange} pending={sender.pending} />

      <EvmWalletSettings projectId={projectId} origin={origin} network={network} keyItem={key} />
    </div>
  );
}
