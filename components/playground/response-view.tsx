"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { formatNumber } from "@/components/ui/format";
import { Spinner } from "@/components/ui/spinner";
import { JsonTree } from "./json-tree";
import { retryAfterText, type Exchange } from "./send";

const TREE_DEPTH = 2;
const ALL = 64;

function pretty(e: Extract<Exchange, { kind: "response" }>): string {
  return e.json === undefined ? e.text : JSON.stringify(e.json, null, 2);
}

function stringifyData(data: unknown): string {
  return typeof data === "string" ? data : JSON.stringify(data, null, 2);
}

/** What a screen reader hears when an answer arrives. */
function announcement(e: Exchange): string {
  if (e.kind === "failed") return `Request failed: ${e.message}`;
  const o = e.outcome;
  const head = `HTTP ${e.status} in ${Math.round(e.ms)} ms, ${e.cu} CU.`;
  if (o.kind === "rpc-error") return `${head} JSON-RPC error ${o.code ?? ""}: ${o.message}`;
  if (o.kind === "http-error") return `${head} ${o.code ?? "Error"}: ${o.message}`;
  if (o.kind === "unexpected") return `${head} ${o.message}`;
  return `${head} Result received.`;
}

function ErrorBox({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div data-testid="response-error" className="space-y-2 rounded-md border border-danger/30 bg-danger-soft px-4 py-3 text-sm text-danger-text">
      <p className="font-semibold">{title}</p>
      {children}
    </div>
  );
}

function OutcomeError({ exchange }: { exchange: Extract<Exchange, { kind: "response" }> }) {
  const o = exchange.outcome;
  if (o.kind === "rpc-error") {
    return (
      <ErrorBox title="JSON-RPC error">
        <dl className="grid gap-x-4 gap-y-1 sm:grid-cols-[5rem_minmax(0,1fr)]">
          <dt className="font-medium">Code</dt>
          <dd className="font-mono">{o.code ?? "—"}</dd>
          <dt className="font-medium">Message</dt>
          <dd className="break-words">{o.message}</dd>
          {o.data !== undefined && o.data !== null && o.data !== "" ? (
            <>
              <dt className="font-medium">Data</dt>
              <dd className="font-mono text-[12.5px] break-words whitespace-pre-wrap">{stringifyData(o.data)}</dd>
            </>
          ) : null}
        </dl>
      </ErrorBox>
    );
  }
  if (o.kind === "http-error") {
    return (
      <ErrorBox title={`HTTP ${exchange.status}${o.code ? ` · ${o.code}` : ""}`}>
        <p className="break-words">{o.message}</p>
        {exchange.retryAfter ? <p>Retry after {retryAfterText(exchange.retryAfter)}.</p> : null}
      </ErrorBox>
    );
  }
  if (o.kind === "unexpected") {
    return (
      <ErrorBox title="Unexpected answer">
        <p>{o.message}</p>
      </ErrorBox>
    );
  }
  return null;
}

function Metric({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <div className="space-y-1">
      <dt className="text-xs font-medium text-muted">{label}</dt>
      <dd data-testid={testId} className="text-sm font-semibold text-fg">
        {children}
      </dd>
    </div>
  );
}

function ViewToggle({ raw, onChange }: { raw: boolean; onChange: (raw: boolean) => void }) {
  const item = (active: boolean) =>
    cn("h-7 rounded px-2.5 text-[13px] font-medium transition-colors focus-visible:outline-2 focus-visible:outline-focus", active ? "bg-surface text-fg shadow-xs" : "text-muted hover:text-fg");
  return (
    <div role="group" aria-label="Response view" className="inline-flex rounded-md border border-line bg-subtle p-0.5">
      <button type="button" aria-pressed={!raw} className={item(!raw)} onClick={() => onChange(false)}>
        Tree
      </button>
      <button type="button" aria-pressed={raw} className={item(raw)} onClick={() => onChange(true)}>
        Raw JSON
      </button>
    </div>
  );
}

function Body({ exchange }: { exchange: Extract<Exchange, { kind: "response" }> }) {
  const [raw, setRaw] = useState(false);
  const [tree, setTree] = useState({ version: 0, depth: TREE_DEPTH });
  const text = pretty(exchange);
  const isJson = exchange.json !== undefined;
  const regroup = (depth: number) => setTree((t) => ({ version: t.version + 1, depth }));
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        {isJson ? <ViewToggle raw={raw} onChange={setRaw} /> : <span className="text-xs text-muted">The answer is not JSON; shown as received.</span>}
        <div className="flex flex-wrap items-center gap-2">
          {isJson && !raw ? (
            <>
              <Button variant="ghost" size="sm" onClick={() => regroup(ALL)}>
                Expand all
              </Button>
              <Button variant="ghost" size="sm" onClick={() => regroup(0)}>
                Collapse all
              </Button>
            </>
          ) : null}
          <CopyButton value={text} label="Copy response" />
        </div>
      </div>
      <div className="rounded-md border border-line bg-canvas">
        {isJson && !raw ? (
          <div className="max-h-[36rem] overflow-auto px-3 py-2.5">
            <JsonTree key={`${exchange.seq}-${tree.version}`} value={exchange.json} openDepth={tree.depth} label="Response JSON" />
          </div>
        ) : (
          <pre
            tabIndex={0}
            aria-label="Raw response"
            data-testid="response-raw"
            className="max-h-[36rem] overflow-auto px-3 py-2.5 font-mono text-[12.5px] leading-relaxed break-all whitespace-pre-wrap text-fg focus-visible:outline-2 focus-visible:outline-focus"
          >
            {text}
          </pre>
        )}
      </div>
    </div>
  );
}

/** The latest answer: status, latency, CU, errors spelled out, and the body as a tree or raw. */
export function ResponseView({ exchange, pending }: { exchange: Exchange | null; pending: boolean }) {
  const card = useRef<HTMLElement>(null);
  const seq = exchange?.seq;
  // Bring a new answer into view when it lands below the fold; focus stays on Send.
  useEffect(() => {
    const el = card.current;
    if (seq === undefined || !el || el.getBoundingClientRect().top < window.innerHeight - 120) return;
    const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    el.scrollIntoView({ behavior: reduce ? "auto" : "smooth", block: "start" });
  }, [seq]);
  return (
    <Card ref={card} aria-labelledby="pg-response-title" aria-busy={pending || undefined}>
      <CardHeader
        titleId="pg-response-title"
        title="Response"
        description={
          exchange ? (
            <code data-testid="response-path" className="break-all text-fg">
              {exchange.httpMethod} {exchange.path}
            </code>
          ) : (
            "Send a request to see the answer here."
          )
        }
        actions={
          pending ? (
            <span className="inline-flex items-center gap-2 text-sm text-muted">
              <Spinner /> Sending…
            </span>
          ) : null
        }
      />
      <CardBody className="space-y-4">
        <p role="status" className="sr-only">
          {exchange && !pending ? announcement(exchange) : ""}
        </p>
        {exchange === null ? (
          <p className="text-sm text-muted">{pending ? "Waiting for the first answer…" : "No request sent yet. Fill in the parameters above and press Send."}</p>
        ) : exchange.kind === "failed" ? (
          <ErrorBox title="The request did not complete">
            <p>{exchange.message}</p>
          </ErrorBox>
        ) : (
          <>
            <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
              <Metric label="HTTP status" testId="response-status">
                <Badge tone={exchange.outcome.kind === "result" ? "success" : "danger"}>
                  {exchange.status} {exchange.statusText}
                </Badge>
              </Metric>
              <Metric label="Latency" testId="response-latency">
                {formatNumber(Math.round(exchange.ms))} ms
              </Metric>
              <Metric label="CU charged" testId="response-cu">
                {formatNumber(exchange.cu)} CU
              </Metric>
              <Metric label="Request ID" testId="response-request-id">
                <span className="font-mono text-xs font-normal break-all">{exchange.requestId ?? "—"}</span>
              </Metric>
            </dl>
            <p className="text-xs text-muted">
              {exchange.method} on {exchange.networkName}
            </p>
            <OutcomeError exchange={exchange} />
            <Body key={exchange.seq} exchange={exchange} />
          </>
        )}
      </CardBody>
    </Card>
  );
}
