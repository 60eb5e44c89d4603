"use client";

import type { FormEvent, ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { KeyStatus } from "./playground-key";
import { curlCommand, type PlaygroundRequest } from "./send";
import type { SendAbout, usePlaygroundSend } from "./use-send";

export interface RequestCardProps {
  /** Prefix of the element ids, unique on the page. */
  idPrefix: string;
  projectId: string;
  description: string;
  sender: ReturnType<typeof usePlaygroundSend>;
  /** The request Send makes, or why the form cannot make one yet. */
  ready: { request: PlaygroundRequest } | { blocker: string };
  about: SendAbout;
  /** Public origin, for the snippets (the browser itself calls the same-origin path). */
  origin: string;
  /** Shown instead of a snippet while the form cannot make a request. */
  snippetPlaceholder: string;
  /** Snippets after the curl command. */
  moreSnippets?: ReactNode;
  /** The picker and the form's fields, above the key's state and Send. */
  children: ReactNode;
}

/**
 * A tab's request form: its fields, the key's state, Send with the reason it is disabled or what a
 * request costs, and the curl command that repeats the request; Send goes through the tab's sender.
 */
export function RequestCard({ idPrefix, projectId, description, sender, ready, about, origin, snippetPlaceholder, moreSnippets, children }: RequestCardProps) {
  const blocker = "blocker" in ready ? ready.blocker : sender.keyBlocker;
  const request = "request" in ready ? ready.request : null;
  const { key, getSecret } = sender;

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (blocker === null && request) void sender.send(request, about);
  }

  return (
    <Card aria-labelledby={`${idPrefix}-request-title`}>
      <CardHeader titleId={`${idPrefix}-request-title`} title="Request" description={description} />
      <CardBody>
        <form onSubmit={onSubmit} noValidate className="space-y-6">
          {children}

          <KeyStatus projectId={projectId} keys={sender.keys} />

          <div className="flex flex-wrap items-center gap-3">
            <Button type="submit" disabled={blocker !== null} pending={sender.pending} aria-describedby={`${idPrefix}-send-note`}>
              Send
            </Button>
            <p id={`${idPrefix}-send-note`} data-testid="send-note" className={cn("text-sm", blocker ? "text-danger-text" : "text-muted")}>
              {blocker ?? (request && `${request.method} ${about.method} on ${about.networkName} · ${about.cu} CU when it succeeds, 0 CU on an error`)}
            </p>
          </div>
        </form>
      </CardBody>
      <div className="space-y-4 border-t border-line px-5 py-4">
        <Snippet
          title="curl"
          testId="curl-command"
          text={request && curlCommand(request, origin, key?.masked ?? "<API_KEY>")}
          placeholder={snippetPlaceholder}
          copy={request && key ? { label: "Copy as curl", value: async () => curlCommand(request, origin, await getSecret()) } : null}
        />
        {moreSnippets}
        {request && key ? <p className="text-xs text-muted">The key is masked here; {moreSnippets ? "the Copy buttons copy" : "Copy as curl copies"} the full key.</p> : null}
      </div>
    </Card>
  );
}

/** A command or code that repeats the request, masked on screen; Copy puts the full key in it. */
export function Snippet({
  title,
  testId,
  text,
  placeholder,
  copy,
}: {
  title: string;
  testId: string;
  /** null while the form cannot make a request. */
  text: string | null;
  placeholder: string;
  copy: { label: string; value: () => Promise<string> } | null;
}) {
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold text-fg">{title}</h3>
        {copy ? <CopyButton value={copy.value} label={copy.label} /> : null}
      </div>
      <pre className="overflow-x-auto rounded-md bg-[#0f1420] px-4 py-3 text-[12.5px] leading-relaxed text-slate-200 dark:bg-black/40">
        <code data-testid={testId} className="break-all whitespace-pre-wrap">
          {text ?? placeholder}
        </code>
      </pre>
    </div>
  );
}
