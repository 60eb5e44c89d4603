"use client";

import { createContext, useCallback, useContext, useMemo, type ReactNode } from "react";
import { useRevealedKey } from "./use-key-secret";

export interface PrimaryKey {
  id: string;
  name: string;
  masked: string;
}

interface KeyRevealState {
  projectId: string;
  key: PrimaryKey | null;
  /** The full secret while revealed, else null. */
  revealed: string | null;
  pending: boolean;
  error: string | null;
  reveal(): Promise<void>;
  hide(): void;
  /** The full secret, fetched if needed, without revealing it on screen. */
  getSecret(): Promise<string>;
}

const Ctx = createContext<KeyRevealState | null>(null);

/** Shares the Overview's key between the key card and the endpoint examples. */
export function KeyRevealProvider({ projectId, primaryKey, children }: { projectId: string; primaryKey: PrimaryKey | null; children: ReactNode }) {
  const { revealed, setRevealed, pending, error, reveal, getSecret } = useRevealedKey(projectId, primaryKey?.id);
  const hide = useCallback(() => setRevealed(null), [setRevealed]);

  const value = useMemo<KeyRevealState>(
    () => ({ projectId, key: primaryKey, revealed, pending, error, reveal, hide, getSecret }),
    [projectId, primaryKey, revealed, pending, error, reveal, hide, getSecret],
  );
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useKeyReveal(): KeyRevealState {
  const value = useContext(Ctx);
  if (!value) throw new Error("useKeyReveal needs a KeyRevealProvider");
  return value;
}
