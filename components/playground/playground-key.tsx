"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useCallback, useSyncExternalStore } from "react";
import { api, errorMessage } from "@/components/api-client";
import { keysQueryKey, type KeyItem } from "@/components/keys/types";
import { useKeySecret } from "@/components/keys/use-key-secret";
import { FormError, Notice } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Select } from "@/components/ui/input";

// The key chosen per project, shared by the playground's tabs for as long as the page lives.
const chosen = new Map<string, string>();
const listeners = new Set<() => void>();
const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** The key chosen for the project's playground requests (undefined: the first) and how to choose another. */
function useChosenKeyId(projectId: string): [string | undefined, (keyId: string) => void] {
  const id = useSyncExternalStore(
    subscribe,
    () => chosen.get(projectId),
    () => undefined,
  );
  const choose = useCallback(
    (keyId: string) => {
      chosen.set(projectId, keyId);
      for (const l of listeners) l();
    },
    [projectId],
  );
  return [id, choose];
}

/** The key the playground sends with (the chosen one, else the project's first) and how to read its secret. */
export function usePlaygroundKey(projectId: string) {
  const keys = useQuery({
    queryKey: keysQueryKey(projectId),
    queryFn: ({ signal }) => api<{ items: KeyItem[] }>(`/api/projects/${encodeURIComponent(projectId)}/keys`, { signal }).then((r) => r.items),
  });
  const [chosenId] = useChosenKeyId(projectId);
  const key = keys.data?.find((k) => k.id === chosenId) ?? keys.data?.[0];
  const getSecret = useKeySecret(projectId, key?.id);
  return { keys, key, getSecret };
}

/** Why requests cannot be sent for lack of a key (failed to load, or none); with several keys, which one to send with. */
export function KeyStatus({ projectId, keys }: { projectId: string; keys: ReturnType<typeof usePlaygroundKey>["keys"] }) {
  const [chosenId, choose] = useChosenKeyId(projectId);
  if (keys.isError) {
    return (
      <div className="flex flex-wrap items-center gap-3">
        <FormError className="flex-1">Could not load your API key. {errorMessage(keys.error)}</FormError>
        <Button variant="secondary" size="sm" onClick={() => void keys.refetch()} pending={keys.isFetching}>
          Try again
        </Button>
      </div>
    );
  }
  if (keys.data && keys.data.length === 0) {
    return (
      <Notice>
        This project has no API key, and requests need one.{" "}
        <Link href={`/projects/${projectId}/keys`} className="font-medium text-accent-text underline underline-offset-2">
          Create a key
        </Link>{" "}
        to send requests.
      </Notice>
    );
  }
  if (keys.data && keys.data.length > 1) {
    const current = keys.data.find((k) => k.id === chosenId) ?? keys.data[0]!;
    const id = `playground-key-${projectId}`;
    return (
      <div className="max-w-sm">
        <Field id={id} label="API key">
          <Select id={id} value={current.id} onChange={(e) => choose(e.target.value)}>
            {keys.data.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name} ({k.masked.slice(0, 7)}…)
              </option>
            ))}
          </Select>
        </Field>
      </div>
    );
  }
  return null;
}
