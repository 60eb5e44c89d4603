"use client";

import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { CopyButton } from "@/components/ui/copy-button";
import { formatDate, formatTime } from "@/components/ui/format";
import { ResetKeyDialog } from "./key-dialogs";
import { EyeIcon, EyeOffIcon, ResetIcon } from "./key-icons";
import { KeySettings } from "./key-settings";
import type { KeyItem } from "./types";
import { useRevealedKey } from "./use-key-secret";

export function KeyRow({ projectId, item, canRevoke }: { projectId: string; item: KeyItem; canRevoke: boolean }) {
  const { revealed, setRevealed, pending: revealing, error, setError, reveal, getSecret } = useRevealedKey(projectId, item.id);
  const [resetOpen, setResetOpen] = useState(false);
  // Set right after a reset: the new secret is shown once, with a note, until hidden.
  const [fresh, setFresh] = useState(false);
  const [editing, setEditing] = useState(false);
  const restricted = [
    item.allowedOrigins.length > 0 ? `${item.allowedOrigins.length} ${item.allowedOrigins.length === 1 ? "origin" : "origins"}` : null,
    item.allowedIps.length > 0 ? `${item.allowedIps.length} ${item.allowedIps.length === 1 ? "address" : "addresses"}` : null,
  ].filter(Boolean);

  // One <tbody> per key: its row, and the notice shown under it after a reset.
  return (
    <tbody className="border-t border-line first-of-type:border-t-0">
      <tr className="align-middle">
        <th scope="row" className="px-5 py-3.5 text-left align-middle font-normal">
          <span className="flex flex-wrap items-center gap-2">
            <span className="text-sm font-medium text-fg">{item.name}</span>
            {restricted.length > 0 ? (
              <Badge tone="accent" data-testid="key-allowlist-badge">
                Allowlist: {restricted.join(", ")}
              </Badge>
            ) : null}
          </span>
          {revealed ? (
            <code data-testid="api-key-value" className="mt-1 block font-mono text-[12.5px] break-all text-fg select-all">
              {revealed}
            </code>
          ) : (
            <code data-testid="api-key-masked" className="mt-1 block font-mono text-[12.5px] text-muted">
              {item.masked}
            </code>
          )}
          {error ? (
            <span role="alert" className="mt-1 block text-xs text-danger-text">
              {error}
            </span>
          ) : null}
        </th>
        <td className="px-3 py-3.5 text-muted">
          <DateCell value={item.createdAt} />
          {item.resetAt ? <span className="mt-1 block text-xs whitespace-nowrap">Reset {formatDate(item.resetAt)}</span> : null}
        </td>
        <td className="px-3 py-3.5 text-muted" data-testid="key-last-used">
          {item.lastUsedAt ? <DateCell value={item.lastUsedAt} /> : "Never"}
        </td>
        <td className="px-5 py-3.5">
          <div className="flex items-center justify-end gap-2">
            {revealed ? (
              <Button
                variant="secondary"
                size="sm"
                onClick={() => {
                  setRevealed(null);
                  setFresh(false);
                }}
                icon={<EyeOffIcon />}
              >
                Hide
              </Button>
            ) : (
              <Button variant="secondary" size="sm" onClick={() => void reveal()} pending={revealing} icon={<EyeIcon />}>
                Reveal
              </Button>
            )}
            <CopyButton value={revealed ?? getSecret} />
            <Button variant="secondary" size="sm" onClick={() => setResetOpen(true)} icon={<ResetIcon />}>
              Reset key
            </Button>
            <Button
              variant="ghost"
              size="sm"
              aria-expanded={editing}
              aria-controls={editing ? `key-${item.id}-settings` : undefined}
              aria-label={`Edit ${item.name}`}
              onClick={() => setEditing((v) => !v)}
            >
              Edit
            </Button>
          </div>
          {/* On success the new secret replaces the masked key in this row, with Copy. */}
          <ResetKeyDialog
            open={resetOpen}
            projectId={projectId}
            item={item}
            onClose={() => setResetOpen(false)}
            onReset={(secret) => {
              setRevealed(secret);
              setFresh(true);
              setError(null);
            }}
          />
        </td>
      </tr>
      {/* Announced, and shown under the row, right after a reset; then the key's settings when open. */}
      <tr>
        <td colSpan={4} className="p-0">
          {editing ? <KeySettings projectId={projectId} item={item} canRevoke={canRevoke} /> : null}
          <div role="status">
            {fresh && revealed ? (
              <p className="mx-5 mb-3.5 rounded-md border border-success-text/25 bg-success-soft px-3 py-2 text-xs font-medium text-success-text">
                Key reset. The old key no longer works: copy the new one into your applications now.
              </p>
            ) : null}
          </div>
        </td>
      </tr>
    </tbody>
  );
}

function DateCell({ value }: { value: string }) {
  return (
    <time dateTime={value} className="block whitespace-nowrap">
      {formatDate(value)}
      <span className="block text-xs">{formatTime(value)}</span>
    </time>
  );
}
