/**
 * OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of the SDK is
 * loaded and every helper here is a boolean check. On, startTracing (the composition root's first
 * step) registers a tracer provider that batches spans to the collector over OTLP/HTTP, the W3C
 * trace-context propagator, a context that follows async calls, and the pg instrumentation;
 * stopTracing (its last step) sends what is left.
 *
 * What makes spans (README, Traces): a gateway request (a server span continuing the caller's
 * traceparent: serveInSpan), each request to an upstream node (a client span that sends traceparent
 * on: startClientSpan), a webhook follower's blocks and the messages it queues, each delivery
 * attempt (linked to its message's span through the traceparent stored with the message), and the
 * PostgreSQL queries made inside any of those. Work outside them (a follower polling for the head,
 * a worker's claims) makes no span: a trace per poll would bury the ones that matter.
 *
 * Attributes never carry a secret: no API key, no URL path (keys and inbox tokens live there), only
 * origins of upstream nodes and the host of a webhook receiver.
 */
import { createRequire } from "node:module";
import os from "node:os";
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { version } from "@/package.json";
import { perProcess } from "@/lib/per-process";

export { SpanKind, SpanStatusCode, type Attributes, type Context, type Link, type Span };

export interface TracingSettings {
  /** The collector's OTLP/HTTP base URL (spans go to <it>/v1/traces); unset: off. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
  ROLE: string;
}

// Per process (lib/per-process.ts): Next.js bundles this module apart, and its code (the console
// queueing test messages, replays) must see tracing on as the custom server turned it.
const state = perProcess("tracing", (): { on: boolean; tracer: Tracer; stop?: () => Promise<void>; pg?: PgInstrumentation } => ({ on: false, tracer: trace.getTracer("blockgate") }));
/** What the helpers hand a callback while tracing is off: records nothing. */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether this process records spans (OTEL_EXPORTER_OTLP_ENDPOINT set, startTracing done). */
export function tracingOn(): boolean {
  return state.on;
}

/**
 * Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans batched to <endpoint>/v1/traces
 * (OTLP/HTTP, JSON), the resource naming the service (OTEL_SERVICE_NAME), its version, role, host
 * and process. The SDK's own OTEL_* settings (OTEL_BSP_SCHEDULE_DELAY, OTEL_TRACES_SAMPLER,
 * OTEL_EXPORTER_OTLP_HEADERS …) apply as usual.
 */
export async function startTracing(settings: TracingSettings): Promise<void> {
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || state.on) return;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { W3CTraceContextPropagator }, { resourceFromAttributes }, { registerInstrumentations }, { PgInstrumentation }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/instrumentation"),
      import("@opentelemetry/instrumentation-pg"),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      "service.name": settings.OTEL_SERVICE_NAME,
      "service.version": version,
      "service.instance.id": `${os.hostname()}:${process.pid}`,
      "host.name": os.hostname(),
      "process.pid": process.pid,
      "blockgate.role": settings.ROLE,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  state.tracer = provider.getTracer("blockgate", version);
  if (state.pg) {
    // Started again in this process (tests): pg's classes are hooked already; patched again for this provider.
    state.pg.setTracerProvider(provider);
    state.pg.enable();
  } else {
    // Queries outside a span (pollers, heartbeats, claims) would each be a trace of their own.
    state.pg = new PgInstrumentation({ requireParentSpan: true });
    registerInstrumentations({ tracerProvider: provider, instrumentations: [state.pg] });
    // pg is loaded before this runs (the server's bundle imports it, and Prisma's adapter, at its
    // top, through ES imports the instrumentation's require hook never sees). A require after the
    // hook is in place hands it pg's loaded exports, and it patches Client and Pool there, in place:
    // every holder of them, Prisma's adapter and our raw pools included, is then traced.
    const load = createRequire(import.meta.url);
    load("pg");
    load("pg-pool");
  }
  state.on = true;
  state.stop = async () => {
    state.on = false;
    state.pg?.disable();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  };
}

/** Sends the spans still batched and stops recording (the composition root's last step). */
export async function stopTracing(): Promise<void> {
  const stop = state.stop;
  state.stop = undefined;
  await stop?.();
}

/**
 * Runs `fn` in a new span `name`, a child of the active one, ended when `fn` returns or its promise
 * settles; a throw or rejection marks it failed. Tracing off: `fn` gets a span that records nothing,
 * and `attributes` and `links`, when functions, are not called.
 */
export function withSpan<T>(name: string, attributes: Attributes | (() => Attributes), fn: (span: Span) => T, options: { kind?: SpanKind; links?: () => Link[] } = {}): T {
  if (!state.on) return fn(NO_SPAN);
  const start = { kind: options.kind ?? SpanKind.INTERNAL, attributes: typeof attributes === "function" ? attributes() : attributes, links: options.links?.() };
  return state.tracer.startActiveSpan(name, start, (span) => {
    const failed = (e: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      span.end();
    };
    try {
      const result = fn(span);
      if (result instanceof Promise) {
        return result.then(
          (value: unknown) => {
            span.end();
            return value;
          },
          (e: unknown) => {
            failed(e);
            throw e;
          },
        ) as T;
      }
      span.end();
      return result;
    } catch (e) {
      failed(e);
      throw e;
    }
  });
}

/**
 * A span of no duration under the active one, marking a moment (a message queued); answers its W3C
 * traceparent, for what follows from it later (span links: linksTo), or null with tracing off.
 */
export function markSpan(name: string, kind: SpanKind, attributes: Attributes): string | null {
  if (!state.on) return null;
  const span = state.tracer.startSpan(name, { kind, attributes });
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  span.end();
  return carrier.traceparent ?? null;
}

/** Links to the spans of these W3C traceparents (markSpan's), the invalid and missing left out. */
export function linksTo(traceparents: ReadonlyArray<string | null | undefined>): Link[] {
  const links: Link[] = [];
  for (const traceparent of traceparents) {
    if (!traceparent) continue;
    const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
    if (linked && trace.isSpanContextValid(linked)) links.push({ context: linked });
  }
  return links;
}

/** Links to the spans active in these contexts (requests whose calls went upstream together), but the active span. */
export function linksToContexts(contexts: ReadonlyArray<Context | undefined>): Link[] {
  const links: Link[] = [];
  const active = trace.getActiveSpan()?.spanContext().spanId;
  for (const c of contexts) {
    const linked = c && trace.getSpanContext(c);
    if (linked && trace.isSpanContextValid(linked) && linked.spanId !== active) links.push({ context: linked });
  }
  return links;
}

/** The active context, to carry across a queue (undefined with tracing off). */
export function activeContext(): Context | undefined {
  return state.on ? context.active() : undefined;
}

/** Sets an attribute on the active span, if any. */
export function annotate(key: string, value: AttributeValue): void {
  if (state.on) trace.getActiveSpan()?.setAttribute(key, value);
}

/**
 * Serves a request in a server span `name`, continuing the caller's trace when it sent a W3C
 * traceparent; the span ends when the answer is sent (or the connection closed before), with its
 * status code. Tracing off: `serve` alone.
 */
export function serveInSpan(req: IncomingMessage, res: ServerResponse, name: string, attributes: Attributes, serve: () => void): void {
  if (!state.on) return serve();
  const caller = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = state.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method ?? "GET", ...attributes } }, caller);
  res.once("close", () => {
    span.setAttribute("http.response.status_code", res.statusCode);
    if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: "the connection closed before the answer was sent" });
    else if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(caller, span), serve);
}

/**
 * A client span for one request to another service, a child of the active span; undefined with
 * tracing off or outside any span (a poller's call), so that background polling makes no trace.
 */
export function startClientSpan(name: string, attributes: Attributes, links?: Link[]): Span | undefined {
  if (!state.on || trace.getActiveSpan() === undefined) return undefined;
  return state.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, links });
}

/** `headers` with the W3C trace headers of `span` (the request it stands for continues its trace). */
export function withTraceHeaders(span: Span | undefined, headers: Record<string, string>): Record<string, string> {
  if (span) propagation.inject(trace.setSpan(context.active(), span), headers);
  return headers;
}

/** Ends a client span with the answer's HTTP status (an error from 500), or failed for `failure` (no address or key in it) when none came. */
export function endClientSpan(span: Span | undefined, status: number | undefined, failure?: string): void {
  if (!span) return;
  if (status !== undefined) {
    span.setAttribute("http.response.status_code", status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  } else span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
  span.end();
}
