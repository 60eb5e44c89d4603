"use client";

import type { KeyItem } from "@/components/keys/types";
import { useRevealedKey } from "@/components/keys/use-key-secret";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import type { ClientNetwork, SettingsDescriptor } from "@/lib/chains/descriptor";

/**
 * Settings for a network as a client takes them (a wallet's "Add a network", for example): a URL
 * that carries the key is masked until revealed.
 */
export function SettingsCard({
  idPrefix,
  settings,
  projectId,
  origin,
  network,
  keyItem,
}: {
  idPrefix: string;
  settings: SettingsDescriptor;
  projectId: string;
  origin: string;
  network: ClientNetwork;
  keyItem: KeyItem | undefined;
}) {
  const { revealed, setRevealed, pending, error, reveal, getSecret } = useRevealedKey(projectId, keyItem?.id);
  const shown = revealed !== null && keyItem ? revealed : (keyItem?.masked ?? "<API_KEY>");
  const titleId = `${idPrefix}-${settings.id}-title`;
  return (
    <Card aria-labelledby={titleId}>
      <CardHeader titleId={titleId} title={settings.title} description={settings.description} />
      <CardBody className="space-y-3">
        <dl data-testid={settings.testId} className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
          {settings.rows(network).map((row) =>
            "keyUrl" in row ? (
              <div key={row.term} className="contents">
                <dt className="text-muted">{row.term}</dt>
                <dd className="space-y-2">
                  <code data-testid={row.keyUrl.testId} className="block font-mono text-[12.5px] break-all text-fg">
                    {row.keyUrl.url(origin, network, shown)}
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
                      <CopyButton label={row.keyUrl.copyLabel} value={async () => row.keyUrl.url(origin, network, await getSecret())} />
                    </div>
                  ) : null}
                  {error ? <FormError>Could not load your API key. {error}</FormError> : null}
                </dd>
              </div>
            ) : (
              <div key={row.term} className="contents">
                <dt className="text-muted">{row.term}</dt>
                <dd data-testid={row.testId} className={row.mono === false ? "text-fg" : "font-mono text-fg"}>
                  {row.value}
                  {row.detail ? <span className="text-muted"> {row.detail}</span> : null}
                  {row.note ? <span className="font-sans text-xs text-muted"> · {row.note}</span> : null}
                </dd>
              </div>
            ),
          )}
        </dl>
      </CardBody>
    </Card>
  );
}
