"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { api, errorMessage } from "@/components/api-client";
import { keysQueryKey, type KeyItem } from "@/components/keys/types";
import { useKeySecret } from "@/components/keys/use-key-secret";
import { FormError, Notice } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";

/** The project's first key (the one the playground sends with) and how to read its secret. */
export function usePlaygroundKey(projectId: string) {
  const keys = useQuery({
    queryKey: keysQueryKey(projectId),
    queryFn: ({ signal }) => api<{ items: KeyItem[] }>(`/api/projects/${encodeURIComponent(projectId)}/keys`, { signal }).then((r) => r.items),
  });
  const key = keys.data?.[0];
  const getSecret = useKeySecret(projectId, key?.id);
  return { keys, key, getSecret };
}

/** Why requests cannot be sent for lack of a key (failed to load, or none), else nothing. */
export function KeyStatus({ projectId, keys }: { projectId: string; keys: ReturnType<typeof usePlaygroundKey>["keys"] }) {
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
  return null;
}
