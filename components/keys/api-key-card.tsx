"use client";

import { Button, ButtonLink } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { FormError } from "@/components/ui/alert";
import { EyeIcon, EyeOffIcon } from "./key-icons";
import { useKeyReveal } from "./key-reveal";

export function ApiKeyCard() {
  const { projectId, key, revealed, pending, error, reveal, hide, getSecret } = useKeyReveal();
  // Named without the word "keys" so it never competes with the sidebar's "Keys" link.
  const manage = (
    <ButtonLink href={`/projects/${projectId}/keys`} variant="secondary" size="sm">
      Manage API key
    </ButtonLink>
  );
  return (
    <Card aria-labelledby="api-key-title">
      <CardHeader
        titleId="api-key-title"
        title="API key"
        description={
          <>
            Send it in the <code className="rounded bg-subtle px-1 py-0.5 text-[12px] text-fg">X-API-KEY</code> header, or as the last
            path segment of a node URL. Keep it secret.
          </>
        }
        actions={manage}
      />
      <CardBody className="space-y-3">
        {key ? (
          <>
            <p className="text-xs font-medium text-muted">{key.name}</p>
            <div className="flex flex-col gap-3 sm:flex-row sm:items-center">
              <div className="flex min-h-10 min-w-0 flex-1 items-center rounded-md border border-line bg-subtle px-3 py-2 font-mono text-[13px]">
                {revealed ? (
                  <code data-testid="api-key-value" className="break-all text-fg">
                    {revealed}
                  </code>
                ) : (
                  <code data-testid="api-key-masked" className="break-all text-muted">
                    <span className="sr-only">Masked key: </span>
                    {key.masked}
                  </code>
                )}
              </div>
              <div className="flex items-center gap-2">
                {revealed ? (
                  <Button variant="secondary" size="sm" onClick={hide} icon={<EyeOffIcon />}>
                    Hide
                  </Button>
                ) : (
                  <Button variant="secondary" size="sm" onClick={() => void reveal()} pending={pending} icon={<EyeIcon />}>
                    Reveal
                  </Button>
                )}
                <CopyButton value={revealed ?? getSecret} />
              </div>
            </div>
            {error ? <FormError>{error}</FormError> : null}
          </>
        ) : (
          <p className="text-sm text-muted">This project has no API key yet. Create one on the Keys page.</p>
        )}
      </CardBody>
    </Card>
  );
}
