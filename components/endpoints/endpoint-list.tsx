"use client";

import { useKeyReveal } from "@/components/keys/key-reveal";
import { Badge } from "@/components/ui/badge";
import { CopyButton } from "@/components/ui/copy-button";
import { endpointEntries, endpointSections } from "@/lib/chains/client";
import type { ClientNetwork } from "@/lib/chains/descriptor";

interface UrlRow {
  label: string;
  /** Shown on screen (the key masked until revealed). */
  display: string;
  /** Copied (fetches the real key when the URL contains it). */
  copy: string | (() => Promise<string>);
  copyLabel: string;
}

/** The network's URLs as its family lists them (lib/chains/client.ts); a URL holding the key shows it masked until revealed. */
function useRows(origin: string, n: ClientNetwork): UrlRow[] {
  const { key, revealed, getSecret } = useKeyReveal();
  return endpointEntries(n, origin).map(({ label, url, copyLabel }) => {
    if (typeof url === "string") return { label, display: url, copy: url, copyLabel };
    return {
      label,
      display: url(revealed ?? key?.masked ?? "<API_KEY>"),
      copy: revealed ? url(revealed) : key ? async () => url(await getSecret()) : url("<API_KEY>"),
      copyLabel,
    };
  });
}

function NetworkItem({ origin, network }: { origin: string; network: ClientNetwork }) {
  const rows = useRows(origin, network);
  return (
    <li className="px-5 py-4" data-network={network.slug}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="flex flex-wrap items-center gap-2">
          <h4 className="text-sm font-semibold text-fg">{network.displayName}</h4>
          {network.source === "devnet" ? (
            <Badge tone="warn" title="Served by the built-in devnet, which uses its own chain id">
              Devnet · chain ID {network.chainId}
            </Badge>
          ) : (
            <>
              <Badge tone="success">Upstream</Badge>
              <span className="text-xs text-muted">chain ID {network.chainId}</span>
            </>
          )}
        </div>
        <p className="text-xs text-muted">
          Head height{" "}
          <span aria-hidden="true" className="font-mono text-fg">
            —
          </span>
          <span className="sr-only">not available yet</span>
        </p>
      </div>
      <dl className="mt-3 space-y-2">
        {rows.map((r) => (
          <div key={r.label} className="grid gap-1 sm:grid-cols-[9.5rem_minmax(0,1fr)] sm:items-center sm:gap-3">
            <dt className="text-xs font-medium text-muted">{r.label}</dt>
            <dd className="flex min-w-0 items-center gap-2">
              <code className="min-w-0 flex-1 truncate rounded-md border border-line bg-subtle px-2.5 py-1.5 text-[12.5px] text-fg" title={r.display}>
                {r.display}
              </code>
              <CopyButton value={r.copy} label={r.copyLabel} iconOnly />
            </dd>
          </div>
        ))}
      </dl>
    </li>
  );
}

export function EndpointList({ origin, networks }: { origin: string; networks: ClientNetwork[] }) {
  return (
    <section aria-labelledby="endpoints-title" className="space-y-4">
      <div className="space-y-1">
        <h2 id="endpoints-title" className="text-lg font-semibold tracking-tight">
          Endpoints
        </h2>
        <p className="text-sm text-muted">Every network this deployment serves, with the URLs to call. Devnet networks run locally with their own chain ids.</p>
      </div>
      {endpointSections(networks).map(({ family, networks: items }) => {
        const headingId = `family-${family.id}`;
        return (
          <section key={family.id} aria-labelledby={headingId} className="rounded-lg border border-line bg-surface shadow-xs">
            <div className="border-b border-line px-5 py-3.5">
              <h3 id={headingId} className="text-[15px] font-semibold">
                {family.overview.title}
              </h3>
              <p className="mt-0.5 text-sm text-muted">{family.overview.description}</p>
            </div>
            <ul className="divide-y divide-line">
              {items.map((n) => (
                <NetworkItem key={n.slug} origin={origin} network={n} />
              ))}
            </ul>
          </section>
        );
      })}
    </section>
  );
}
