"use client";

import type { KeyItem } from "@/components/keys/types";
import { useRevealedKey } from "@/components/keys/use-key-secret";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { walletRpcUrl, type EvmPlaygroundNetwork } from "./evm-request";

/**
 * What a wallet (MetaMask's "Add a network", for example) needs to use this network through
 * Blockgate: the RPC URL carries the key in its path, masked until revealed.
 */
export function EvmWalletSettings({ projectId, origin, network, keyItem }: { projectId: string; origin: string; network: EvmPlaygroundNetwork; keyItem: KeyItem | undefined }) {
  const { revealed, setRevealed, pending, error, reveal, getSecret } = useRevealedKey(projectId, keyItem?.id);
  const shown = revealed !== null && keyItem ? revealed : (keyItem?.masked ?? "<API_KEY>");
  const chainHex = /^\d+$/.test(network.chainId) ? `0x${BigInt(network.chainId).toString(16)}` : null;
  return (
    <Card aria-labelledby="pg-evm-wallet-title">
      <CardHeader
        titleId="pg-evm-wallet-title"
        title="Wallet settings"
        description="Add this network to a wallet with these values; the RPC URL holds the project's key."
      />
      <CardBody className="space-y-3">
        <dl data-testid="wallet-settings" className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
          <dt className="text-muted">Network name</dt>
          <dd className="text-fg">
            {network.displayName}
            {network.source === "devnet" ? " (Blockgate devnet)" : ""}
          </dd>
          <dt className="text-muted">RPC URL</dt>
          <dd className="space-y-2">
            <code data-testid="wallet-rpc-url" className="block font-mono text-[12.5px] break-all text-fg">
              {walletRpcUrl(origin, network.slug, shown)}
            </code>
            {keyItem ? (
              <div className="flex flex-wrap items-center gap-2">
                {revealed === null ? (
                  <Button variant="secondary" size="sm" pending={pending} onClick={() => void reveal()}>
                    Reveal key
                  </Button>
                ) : (
                  <Button variant="secondary" size="sm" onClick={() => setRevealed(null)}>
                    Hide key
                  </Button>
                )}
                <CopyButton label="Copy RPC URL" value={async () => walletRpcUrl(origin, network.slug, await getSecret())} />
              </div>
            ) : null}
            {error ? <FormError>Could not load your API key. {error}</FormError> : null}
          </dd>
          <dt className="text-muted">Chain ID</dt>
          <dd data-testid="wallet-chain-id" className="font-mono text-fg">
            {network.chainId}
            {chainHex ? <span className="text-muted"> ({chainHex})</span> : null}
            {network.source === "devnet" ? <span className="font-sans text-xs text-muted"> · the devnet&apos;s own id, not the real chain&apos;s</span> : null}
          </dd>
          <dt className="text-muted">Currency symbol</dt>
          <dd className="font-mono text-fg">{network.currency}</dd>
        </dl>
      </CardBody>
    </Card>
  );
}
