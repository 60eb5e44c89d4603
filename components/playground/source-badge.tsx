import { Badge } from "@/components/ui/badge";

/** Where a network's answers come from: a built-in devnet (with its own chain id) or an upstream node. */
export function SourceBadge({ network, devnetTitle }: { network: { source: "devnet" | "upstream"; chainId: string }; devnetTitle: string }) {
  return network.source === "devnet" ? (
    <Badge tone="warn" title={devnetTitle}>
      Devnet · chain ID {network.chainId}
    </Badge>
  ) : (
    <span className="inline-flex items-center gap-2">
      <Badge tone="success">Upstream</Badge>
      <span className="text-xs text-muted">chain ID {network.chainId}</span>
    </span>
  );
}
