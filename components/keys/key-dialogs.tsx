"use client";

import { useQueryClient } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { keyPath, keysQueryKey, secretQueryKey, type KeyItem } from "./types";

interface KeyDialogProps {
  open: boolean;
  projectId: string;
  item: Pick<KeyItem, "id" | "name" | "masked">;
  onClose: () => void;
}

/** Confirms a reset: a new secret replaces the key's, cached for Reveal and Copy, and handed to `onReset`. */
export function ResetKeyDialog({ open, projectId, item, onClose, onReset }: KeyDialogProps & { onReset: (secret: string) => void }) {
  const queryClient = useQueryClient();
  return (
    <ConfirmDialog
      open={open}
      onClose={onClose}
      title={`Reset “${item.name}”?`}
      description={
        <>
          A new secret replaces <code className="text-fg">{item.masked}</code>. The old key stops working immediately: every application
          that uses it gets authentication errors until you update it.
        </>
      }
      confirmLabel="Reset key"
      action={() => api<{ apiKey: string }>(`${keyPath(projectId, item.id)}/reset`, { method: "POST" }).then((r) => r.apiKey)}
      onDone={(secret) => {
        onReset(secret);
        queryClient.setQueryData(secretQueryKey(projectId, item.id), secret);
        void queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) });
      }}
    />
  );
}

/** Confirms a revocation: the key leaves the list, and its cached secret is dropped. */
export function RevokeKeyDialog({ open, projectId, item, onClose }: KeyDialogProps) {
  const queryClient = useQueryClient();
  return (
    <ConfirmDialog
      open={open}
      onClose={onClose}
      title={`Revoke “${item.name}”?`}
      description={
        <>
          <code className="text-fg">{item.masked}</code> stops working immediately and for good: every request with it is refused. This
          cannot be undone; its usage stays in your charts.
        </>
      }
      confirmLabel="Revoke key"
      action={() => api<void>(keyPath(projectId, item.id), { method: "DELETE" })}
      onDone={() => {
        queryClient.removeQueries({ queryKey: secretQueryKey(projectId, item.id) });
        void queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) });
      }}
    />
  );
}
