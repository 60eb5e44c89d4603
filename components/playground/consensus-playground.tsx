"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import { CONSENSUS_ENDPOINTS, CONSENSUS_METHODS, type ConsensusMethod } from "@/lib/consensus/catalog";
import { ExamplesFrame } from "./examples-frame";
import { ParamField } from "./param-field";
import { RequestPicker, usePick } from "./picker";
import { checkForm, consensusRequest, initialValuesByMethod, requestParams } from "./request";
import { RequestCard, Snippet } from "./request-card";
import { ResponseView } from "./response-view";
import { exampleFor, examplesPath, examplesQueryKey, type PlaygroundNetwork, type RecentExamples } from "./types";
import { usePlaygroundSend } from "./use-send";

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

const CHOICES = CONSENSUS_METHODS.map((m) => ({ method: m, title: CONSENSUS_ENDPOINTS[m].title, description: CONSENSUS_ENDPOINTS[m].description, cu: CONSENSUS_ENDPOINTS[m].cu }));

function shortHash(hash: string): string {
  return hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash;
}

function RecentData({ network, data }: { network: PlaygroundNetwork; data: RecentExamples }) {
  if (data.latestHeight === null) {
    return (
      <div data-testid="examples-empty" className="text-sm text-muted">
        <p className="font-medium text-fg">
          {network.source === "devnet" ? "The devnet has not produced blocks yet." : "No blocks from the upstream node have been stored yet."}
        </p>
        <p>Examples appear here as soon as there are blocks; this checks again every few seconds. Requests can be sent meanwhile.</p>
      </div>
    );
  }
  return (
    <>
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
      <p className="text-xs text-muted">Each parameter with an example has a “Use example” button.</p>
    </>
  );
}

/** The native CometBFT URL (key in the path) beside /rpc, and which to use. */
function NativeUrl({ origin, slug, sender }: { origin: string; slug: string; sender: ReturnType<typeof usePlaygroundSend> }) {
  const { key, getSecret } = sender;
  const base = `${origin}/cometbft/${slug}`;
  return (
    <div className="space-y-2">
      <Snippet
        title="CometBFT tools URL"
        testId="cometbft-url"
        text={`${base}/${key?.masked ?? "<API_KEY>"}`}
        placeholder=""
        copy={key ? { label: "Copy CometBFT URL", value: async () => `${base}/${await getSecret()}` } : null}
      />
      <p data-testid="cometbft-url-note" className="text-xs text-muted">
        <code className="font-mono">/rpc</code> is the documented API; <code className="font-mono">/cometbft</code> is the URL for CometBFT tools (cosmjs, explorers, relayers)
      </p>
    </div>
  );
}

/**
 * The consensus-chain playground: network, endpoint and a form generated from the endpoint
 * catalog; Send calls the public endpoint from this browser with the project's first key.
 */
export function ConsensusPlayground({ projectId, origin, networks, initialNetwork, initialMethod }: ConsensusPlaygroundProps) {
  const pick = usePick(networks, initialNetwork, initialMethod);
  const { network, method } = pick;
  const [valuesByMethod, setValuesByMethod] = useState(initialValuesByMethod);
  const sender = usePlaygroundSend(projectId);

  const spec = CONSENSUS_ENDPOINTS[method];
  const values = valuesByMethod[method];
  const form = checkForm(spec, values);
  const request = consensusRequest(network.slug, method, requestParams(spec, values));

  const examples = useQuery({
    queryKey: examplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<RecentExamples>(examplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (q.state.data?.latestHeight === null ? EMPTY_POLL_MS : false),
  });

  function setValue(name: string, value: string) {
    setValuesByMethod((all) => ({ ...all, [method]: { ...all[method], [name]: value } }));
  }

  return (
    <div className="space-y-6">
      <RequestCard
        idPrefix="pg"
        projectId={projectId}
        description="Requests go from this browser to the public endpoint with the project's API key, and are metered like any other call."
        sender={sender}
        ready={form.blocker === null ? { request } : { blocker: form.blocker }}
        about={{ networkName: network.displayName, method, cu: form.cu }}
        origin={origin}
        snippetPlaceholder="Fill in the parameters to get a command."
        moreSnippets={<NativeUrl origin={origin} slug={network.slug} sender={sender} />}
      >
        <RequestPicker idPrefix="pg" pick={pick} devnetTitle="Served by the built-in devnet, which uses its own chain id" legend="Endpoint" choices={CHOICES} columns={2} />

        <ExamplesFrame
          idPrefix="pg"
          title={`Recent data on ${network.displayName}`}
          refreshLabel="Refresh examples"
          examples={examples}
          loading={{ label: "Loading examples" }}
          errorLead="Could not load the examples."
        >
          {(data) => <RecentData network={network} data={data} />}
        </ExamplesFrame>

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
                      check={form.checks[p.name] ?? { missing: false, error: null, query: null }}
                      example={exampleFor(method, p.name, examples.data)}
                      onChange={(v) => setValue(p.name, v)}
                    />
                  </div>
                ))}
              </div>
            </>
          )}
        </fieldset>
      </RequestCard>

      <ResponseView exchange={sender.exchange} pending={sender.pending} />
    </div>
  );
}
