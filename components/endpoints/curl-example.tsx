"use client";

import { useKeyReveal } from "@/components/keys/key-reveal";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { curlExample } from "./types";

/** A ready-to-paste request; it shows the masked key until revealed, and Copy always copies the real one. */
export function CurlExample({ origin, slug, networkName }: { origin: string; slug: string; networkName: string }) {
  const { key, revealed, getSecret } = useKeyReveal();
  const shown = curlExample(origin, slug, revealed ?? key?.masked ?? "<API_KEY>");
  const copy = revealed ? curlExample(origin, slug, revealed) : key ? async () => curlExample(origin, slug, await getSecret()) : shown;
  return (
    <Card aria-labelledby="quickstart-title">
      <CardHeader
        titleId="quickstart-title"
        title="Quick start"
        description={<>Ask {networkName} for its chain id. Copy pastes the full key, even while it is hidden here.</>}
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
