"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import { APTOS_ROUTES } from "@/lib/aptos/catalog";
import {
  APTOS_PLAYGROUND_ROUTES,
  aptosExampleFor,
  aptosFieldSpec,
  aptosPlaceholder,
  aptosRequest,
  aptosTypeSummary,
  aptosValues,
  checkAptosForm,
  type AptosExamples,
  type AptosPlaygroundNetwork,
  type AptosRoute,
} from "./aptos-request";
import { ExamplesFrame } from "./examples-frame";
import { ParamField } from "./param-field";
import { RequestPicker, usePick } from "./picker";
import type { ParamValues } from "./request";
import { RequestCard } from "./request-card";
import { ResponseView } from "./response-view";
import { examplesPath, examplesQueryKey } from "./types";
import { usePlaygroundSend } from "./use-send";

export interface AptosPlaygroundProps {
  projectId: string;
  /** Public origin, for the curl command (the browser itself calls the same-origin path). */
  origin: string;
  /** The Aptos networks; never empty. */
  networks: AptosPlaygroundNetwork[];
  initialNetwork: string;
  initialRoute: AptosRoute;
}

/** While an index has no blocks yet, look again this often. */
const EMPTY_POLL_MS = 3000;

const CHOICES = APTOS_PLAYGROUND_ROUTES.map((r) => ({
  method: r,
  title: APTOS_ROUTES[r].title,
  description: `GET /v1${APTOS_ROUTES[r].path === "/" ? "" : APTOS_ROUTES[r].path}`,
  cu: APTOS_ROUTES[r].cu,
}));

function short(v: string): string {
  return v.length > 22 ? `${v.slice(0, 10)}…${v.slice(-8)}` : v;
}

function LedgerValues({ network, data }: { network: AptosPlaygroundNetwork; data: AptosExamples }) {
  if (data.blockHeight === null) {
    return (
      <div data-testid="aptos-examples-empty" className="text-sm text-muted">
        <p className="font-medium text-fg">{network.source === "devnet" ? "The devnet has not produced blocks yet." : "No blocks from the upstream fullnode have been stored yet."}</p>
        <p>Values appear here as soon as there are blocks; this checks again every few seconds. Requests can be sent meanwhile.</p>
      </div>
    );
  }
  const tx = data.transaction;
  return (
    <>
      <dl data-testid="aptos-examples" className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
        <dt className="text-muted">Latest block height</dt>
        <dd className="font-mono text-fg">{data.blockHeight}</dd>
        <dt className="text-muted">Ledger version</dt>
        <dd className="font-mono text-fg">{data.ledgerVersion}</dd>
        <dt className="text-muted">Recent transaction</dt>
        <dd className="font-mono text-fg" title={tx?.hash}>
          {tx ? `${short(tx.hash)} (version ${tx.version})` : <span className="font-sans text-muted">none stored yet</span>}
        </dd>
        {tx?.sender ? (
          <>
            <dt className="text-muted">Its sender</dt>
            <dd className="font-mono break-all text-fg">{tx.sender}</dd>
          </>
        ) : null}
      </dl>
      <p className="text-xs text-muted">Required parameters are filled from these values until you edit them.</p>
    </>
  );
}

/** Edited values, by route; a parameter without an edit shows its default from the index. */
type Edits = Partial<Record<AptosRoute, ParamValues>>;

/**
 * The Aptos read API playground: network, route and a form generated from the route catalog,
 * filled from the network's index; Send calls the public endpoint from this browser with the
 * project's first key.
 */
export function AptosPlayground({ projectId, origin, networks, initialNetwork, initialRoute }: AptosPlaygroundProps) {
  const pick = usePick(networks, initialNetwork, initialRoute);
  const { network, method: route } = pick;
  const [edits, setEdits] = useState<Edits>({});
  const sender = usePlaygroundSend(projectId);

  const examples = useQuery({
    queryKey: examplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<AptosExamples>(examplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (q.state.data?.blockHeight === null ? EMPTY_POLL_MS : false),
  });

  const spec = APTOS_ROUTES[route];
  const values = aptosValues(route, edits[route], examples.data);
  const form = checkAptosForm(route, values);
  const request = aptosRequest(network.path, route, values);

  function setValue(name: string, value: string) {
    setEdits((all) => ({ ...all, [route]: { ...all[route], [name]: value } }));
  }

  return (
    <div className="space-y-6">
      <RequestCard
        idPrefix="pg-aptos"
        projectId={projectId}
        description="Requests go from this browser to the Aptos read API (fullnode REST) with the project's API key, and are metered like any other call."
        sender={sender}
        ready={form.blocker === null ? { request } : { blocker: form.blocker }}
        about={{ networkName: network.displayName, method: route, cu: form.cu }}
        origin={origin}
        snippetPlaceholder="Fill in the parameters to get a command."
      >
        <RequestPicker idPrefix="pg-aptos" pick={pick} devnetTitle="Served by the built-in Aptos devnet, which uses its own chain id" legend="Route" choices={CHOICES} columns={2} />

        <ExamplesFrame
          idPrefix="pg-aptos"
          title={`Ledger of ${network.displayName}`}
          refreshLabel="Refresh values"
          examples={examples}
          loading={{ label: "Loading values from the index" }}
          errorLead="Could not read values from the index."
        >
          {(data) => <LedgerValues network={network} data={data} />}
        </ExamplesFrame>

        <fieldset className="space-y-3">
          <legend className="text-sm font-medium text-fg">
            Parameters of <code className="font-mono">GET /v1{spec.path === "/" ? "" : spec.path}</code>
          </legend>
          {spec.params.length === 0 ? (
            <p className="text-sm text-muted">This route takes no parameters.</p>
          ) : (
            <>
              {spec.params.some((p) => p.in === "path") ? (
                <p className="text-xs text-muted">
                  <span aria-hidden="true" className="text-danger-text">
                    *
                  </span>{" "}
                  Required
                </p>
              ) : null}
              <div className="grid gap-x-4 gap-y-5 sm:grid-cols-2">
                {spec.params.map((p) => (
                  <div key={`${route}-${p.name}`} className={p.name === "txn_hash" || p.name === "address" ? "sm:col-span-2" : undefined}>
                    <ParamField
                      id={`pg-aptos-${route}-${p.name}`}
                      spec={aptosFieldSpec(p)}
                      value={values[p.name] ?? ""}
                      check={form.checks[p.name] ?? { missing: false, error: null, query: null }}
                      example={aptosExampleFor(p.name, examples.data)}
                      summary={aptosTypeSummary(p)}
                      placeholder={aptosPlaceholder(p)}
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
