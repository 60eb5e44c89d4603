"use client";

import { useKeyReveal } from "@/components/keys/key-reveal";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { clientFamily } from "@/lib/chains/client";
import type { ClientNetwork } from "@/lib/chains/descriptor";

/**
 * A ready-to-paste first request on `network` (its family's quick start); it shows the masked key
 * until revealed, and Copy always copies the real one.
 */
export function CurlExample({ origin, network }: { origin: string; network: ClientNetwork }) {
  const { key, revealed, getSecret } = useKeyReveal();
  const quickStart = clientFamily(network.family)?.overview.quickStart;
  if (!quickStart) return null;
  const command = (apiKey: string) => quickStart.command(origin, network, apiKey);
  const shown = command(revealed ?? key?.masked ?? "<API_KEY>");
  const copy = revealed ? command(revealed) : key ? async () => command(await getSecret()) : shown;
  return (
    <Card aria-labelledby="quickstart-title">
      <CardHeader
        titleId="quickstart-title"
        title="Quick start"
        description={
          <>
            Ask {network.displayName} {quickStart.asks}. Copy pastes the full key, even while it is hidden here.
          </>
        }
        actions={<CopyButton value={copy} label="Copy curl example" />}
      />
      <CardBody>
        <pre className="overflow-x-auto rounded-md bg-[#0f1420] px-4 py-3 text-[12.5px] leading-relaxed text-slate-200 dark:bg-black/40">
          <code data-testid="curl-example" className="whitespace-pre-wrap break-all">
            {shown}
          </code>
        </pre>
      </CardBody>
    </Card>
  );
}
