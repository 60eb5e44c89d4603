"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { keyPath, keysQueryKey, secretQueryKey, type KeyItem } from "./types";

/** Confirms a revocation; on success the key leaves the list. */
export function RevokeKeyDialog({ open, projectId, item, onClose }: { open: boolean; projectId: string; item: KeyItem; onClose: () => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => api<void>(keyPath(projectId, item.id), { method: "DELETE" }),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: secretQueryKey(projectId, item.id) });
      void queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) });
      close();
    },
  });

  function close() {
    revoke.reset();
    onClose();
  }

  return (
    <Dialog
      open={open}
      onClose={close}
      busy={revoke.isPending}
      title={`Revoke “${item.name}”?`}
      description={
        <>
          <code className="text-fg">{item.masked}</code> stops working immediately and for good: every request with it is refused. This
          cannot be undone; its usage stays in your charts.
        </>
      }
    >
      <div className="space-y-4">
        {revoke.isError ? <FormError>{errorMessage(revoke.error)}</FormError> : null}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close} disabled={revoke.isPending} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" onClick={() => revoke.mutate()} pending={revoke.isPending}>
            Revoke key
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
