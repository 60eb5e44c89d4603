"use client";

import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SourceBadge } from "./source-badge";
import type { PlaygroundNetwork } from "./types";

/** Keeps the choice in the address, so that the page can be shared or reloaded as it is. */
function keepInAddress(network: string, method: string) {
  const url = new URL(window.location.href);
  url.searchParams.set("network", network);
  url.searchParams.set("method", method);
  window.history.replaceState(null, "", url);
}

/** The network and method (or endpoint) a tab sends to. */
export interface PickState<N extends PlaygroundNetwork, M extends string> {
  networks: readonly N[];
  network: N;
  method: M;
  setNetwork(slug: string): void;
  setMethod(method: M): void;
}

/** The tab's choice, starting from the address's (checked by the page) and kept in it. */
export function usePick<N extends PlaygroundNetwork, M extends string>(networks: readonly N[], initialNetwork: string, initialMethod: M): PickState<N, M> {
  const [slug, setSlug] = useState(initialNetwork);
  const [method, setMethod] = useState(initialMethod);
  const network = networks.find((n) => n.slug === slug) ?? networks[0]!;
  return {
    networks,
    network,
    method,
    setNetwork(next: string) {
      setSlug(next);
      keepInAddress(next, method);
    },
    setMethod(next: M) {
      setMethod(next);
      keepInAddress(network.slug, next);
    },
  };
}

export interface MethodChoice<M extends string> {
  method: M;
  /** A title in words, shown before the method's name; without one the name is the title. */
  title?: string;
  description: string;
  cu: number;
}

export interface RequestPickerProps<N extends PlaygroundNetwork, M extends string> {
  /** Prefix of the element ids, unique on the page. */
  idPrefix: string;
  pick: PickState<N, M>;
  /** The source badge's tooltip on a devnet. */
  devnetTitle: string;
  /** "Endpoint" or "Method". */
  legend: string;
  choices: ReadonlyArray<MethodChoice<M>>;
  /** Columns of choices on a large screen. */
  columns: 2 | 3;
}

/**
 * The network select with where its answers come from, and one radio per method with its CU:
 * native controls, so that Tab and the arrow keys move through them.
 */
export function RequestPicker<N extends PlaygroundNetwork, M extends string>({ idPrefix, pick, devnetTitle, legend, choices, columns }: RequestPickerProps<N, M>) {
  const { network, method } = pick;
  return (
    <>
      <div className="flex flex-wrap items-end gap-x-4 gap-y-2">
        <div className="w-full space-y-1.5 sm:w-80">
          <Label htmlFor={`${idPrefix}-network`}>Network</Label>
          <Select id={`${idPrefix}-network`} value={network.slug} onChange={(e) => pick.setNetwork(e.target.value)}>
            {pick.networks.map((n) => (
              <option key={n.slug} value={n.slug}>
                {n.displayName} ({n.slug}) · {n.source === "devnet" ? "devnet" : "upstream"}
              </option>
            ))}
          </Select>
        </div>
        <div className="pb-2.5" data-testid="network-source">
          <SourceBadge network={network} devnetTitle={devnetTitle} />
        </div>
      </div>

      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-fg">{legend}</legend>
        <div className={cn("grid gap-2 sm:grid-cols-2", columns === 3 && "lg:grid-cols-3")}>
          {choices.map((c) => {
            const checked = c.method === method;
            const id = `${idPrefix}-method-${c.method}`;
            return (
              <label
                key={c.method}
                className={cn("flex cursor-pointer gap-3 rounded-md border px-3 py-2.5 transition-colors", checked ? "border-accent bg-accent-soft/60" : "border-line hover:bg-subtle")}
              >
                <input
                  type="radio"
                  name={`${idPrefix}-method`}
                  value={c.method}
                  checked={checked}
                  onChange={() => pick.setMethod(c.method)}
                  aria-labelledby={`${id}-title`}
                  aria-describedby={`${id}-detail`}
                  className="mt-1 size-4 shrink-0 accent-accent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-focus"
                />
                <span className="min-w-0 flex-1">
                  <span className="flex flex-wrap items-center justify-between gap-x-2">
                    {c.title === undefined ? (
                      <code id={`${id}-title`} className="font-mono text-[13px] font-semibold text-fg">
                        {c.method}
                      </code>
                    ) : (
                      <span className="flex flex-wrap items-baseline gap-x-2">
                        <span id={`${id}-title`} className="text-sm font-semibold text-fg">
                          {c.title}
                        </span>
                        <code aria-hidden="true" className="font-mono text-xs text-muted">
                          {c.method}
                        </code>
                      </span>
                    )}
                    <Badge tone={checked ? "accent" : "neutral"} aria-hidden="true">
                      {c.cu} CU
                    </Badge>
                  </span>
                  <span id={`${id}-detail`} className="mt-0.5 block text-xs text-muted">
                    <span className="sr-only">
                      {c.title === undefined ? "" : `Method ${c.method}, `}
                      {c.cu} compute units per call.{" "}
                    </span>
                    {c.description}
                  </span>
                </span>
              </label>
            );
          })}
        </div>
      </fieldset>
    </>
  );
}
