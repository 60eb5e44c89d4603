"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { secretQueryKey } from "@/components/keys/types";
import { usePlaygroundKey } from "./playground-key";
import { exchangeOf, LatestRequest, requestUrl, sendRequest, type Exchange, type PlaygroundRequest } from "./send";

/** What the response view names a request by, and what it costs when it succeeds. */
export interface SendAbout {
  networkName: string;
  method: string;
  cu: number;
}

/**
 * Sends playground requests from this browser with the project's first key: one at a time (a new
 * Send aborts the one in flight, and leaving the page aborts it too), timed, with the latest
 * answer or failure as `exchange`.
 */
export function usePlaygroundSend(projectId: string) {
  const queryClient = useQueryClient();
  const { keys, key, getSecret } = usePlaygroundKey(projectId);
  const [exchange, setExchange] = useState<Exchange | null>(null);
  const [pending, setPending] = useState(false);
  const [latest] = useState(() => new LatestRequest());
  useEffect(() => () => latest.abort(), [latest]);

  /** Why requests cannot be sent for lack of a key; null when there is one. */
  const keyBlocker = keys.isPending ? "Loading your API key…" : !key ? "This project needs an API key to send requests." : null;

  async function send(request: PlaygroundRequest, about: SendAbout): Promise<void> {
    if (!key) return;
    const turn = latest.start();
    const path = requestUrl(request);
    setPending(true);
    const answer = await sendRequest(path, request, getSecret, turn.signal);
    // A key reset elsewhere: forget the cached secret so the next Send fetches the new one.
    if (answer?.kind === "response" && answer.status === 401) queryClient.removeQueries({ queryKey: secretQueryKey(projectId, key.id) });
    if (!turn.isLatest()) return;
    if (answer) setExchange(exchangeOf({ seq: turn.seq, networkName: about.networkName, method: about.method, httpMethod: request.method, path }, answer, about.cu));
    setPending(false);
  }

  return { keys, key, getSecret, keyBlocker, exchange, pending, send };
}
