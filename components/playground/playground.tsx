"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import { clientFamily } from "@/lib/chains/client";
import {
  checkParams,
  formatParams,
  formValues,
  type ClientNetwork,
  type FormCheck,
  type ParamsCheck,
  type ParamValues,
  type PlaygroundDescriptor,
  type PlaygroundRequest,
  type RichText,
} from "@/lib/chains/descriptor";
import { ChainValues } from "./chain-values";
import { ExamplesFrame } from "./examples-frame";
import { FormParams, JsonParams } from "./params";
import { RequestPicker, usePick, type PickState } from "./picker";
import { RequestCard, Snippet } from "./request-card";
import { ResponseView } from "./response-view";
import { SettingsCard } from "./settings-card";
import { examplesPath, examplesQueryKey } from "./types";
import { usePlaygroundSend } from "./use-send";

export interface PlaygroundProps {
  /** The family whose tab this is (its client descriptor, lib/chains/client.ts, says what to show). */
  family: string;
  projectId: string;
  /** Public origin, for the snippets (the browser itself calls the same-origin path). */
  origin: string;
  /** The family's networks; never empty. */
  networks: ClientNetwork[];
  initialNetwork: string;
  initialMethod: string;
}

/** While the chain has not produced what the examples need, look again this often. */
const EXAMPLES_POLL_MS = 3000;

/** Edits of the parameters: a form's values by method, or params text by network and method. */
interface Edits {
  form: Record<string, ParamValues>;
  json: Record<string, string>;
}

/** What the parameters make: the request (or why not yet), its CU, and the input the snippets repeat. */
type Params =
  | { kind: "form"; values: ParamValues; form: FormCheck; ready: { request: PlaygroundRequest } | { blocker: string }; input: unknown; cu: number }
  | { kind: "json"; text: string; edited: boolean; check: ParamsCheck; ready: { request: PlaygroundRequest } | { blocker: string }; input: unknown; cu: number };

const jsonKey = (network: string, method: string) => `${network} ${method}`;

function paramsOf(d: PlaygroundDescriptor, network: ClientNetwork, method: string, edits: Edits, examples: unknown): Params {
  const editor = d.editor;
  if (editor.kind === "form") {
    const values = formValues(editor, method, edits.form[method], examples);
    const form = editor.check(method, values);
    const ready = form.blocker === null ? { request: editor.request(network, method, values) } : { blocker: form.blocker };
    return { kind: "form", values, form, ready, input: form.blocker === null ? values : null, cu: form.cu };
  }
  const edited = edits.json[jsonKey(network.slug, method)];
  const text = edited ?? formatParams(editor.template(method, examples));
  const check = checkParams(text);
  const ready = check.ok ? { request: editor.request(network, method, check.params) } : { blocker: "Fix the params to send." };
  return { kind: "json", text, edited: edited !== undefined, check, ready, input: check.ok ? check.params : null, cu: editor.cu(method) };
}

function Rich({ text }: { text: RichText }) {
  return text.map((part, i) => (typeof part === "string" ? part : <code key={i} className="font-mono">{part.code}</code>));
}

/** The family's snippets after the curl command, each with the key masked on screen and in full when copied. */
function MoreSnippets({ d, origin, pick, sender, input }: { d: PlaygroundDescriptor; origin: string; pick: PickState<ClientNetwork, string>; sender: ReturnType<typeof usePlaygroundSend>; input: unknown }) {
  const { key, getSecret } = sender;
  const context = { origin, network: pick.network, method: pick.method, input };
  return d.snippets?.map((s) => {
    const shown = s.text({ ...context, key: key?.masked ?? "<API_KEY>" });
    return (
      <div key={s.testId} className="space-y-2">
        <Snippet
          title={s.title}
          testId={s.testId}
          text={shown}
          placeholder={d.snippetPlaceholder}
          copy={key && shown !== null ? { label: s.copyLabel, value: async () => s.text({ ...context, key: await getSecret() }) ?? "" } : null}
        />
        {s.note ? (
          <p data-testid={s.noteTestId} className="text-xs text-muted">
            <Rich text={s.note} />
          </p>
        ) : null}
      </div>
    );
  });
}

function FamilyPlayground({ d, projectId, origin, networks, initialNetwork, initialMethod }: Omit<PlaygroundProps, "family"> & { d: PlaygroundDescriptor }) {
  const pick = usePick(networks, initialNetwork, initialMethod);
  const { network, method } = pick;
  const [edits, setEdits] = useState<Edits>({ form: {}, json: {} });
  const sender = usePlaygroundSend(projectId);

  const examples = useQuery({
    queryKey: examplesQueryKey(projectId, network.slug),
    queryFn: ({ signal }) => api<unknown>(examplesPath(projectId, network.slug), { signal }),
    refetchInterval: (q) => (q.state.data !== undefined && d.examples.poll(q.state.data, network) ? EXAMPLES_POLL_MS : false),
  });

  const params = paramsOf(d, network, method, edits, examples.data);
  const setFormValue = (name: string, value: string) => setEdits((all) => ({ ...all, form: { ...all.form, [method]: { ...all.form[method], [name]: value } } }));
  const setJson = (text: string | undefined) =>
    setEdits((all) => {
      const json = { ...all.json };
      if (text === undefined) delete json[jsonKey(network.slug, method)];
      else json[jsonKey(network.slug, method)] = text;
      return { ...all, json };
    });
  const more = d.snippets && d.snippets.length > 0 ? <MoreSnippets d={d} origin={origin} pick={pick} sender={sender} input={params.input} /> : undefined;

  return (
    <div className="space-y-6">
      <RequestCard
        idPrefix={d.idPrefix}
        projectId={projectId}
        description={d.description}
        sender={sender}
        ready={params.ready}
        about={{ networkName: network.displayName, method, cu: params.cu }}
        origin={origin}
        snippetPlaceholder={d.snippetPlaceholder}
        moreSnippets={more}
      >
        <RequestPicker idPrefix={d.idPrefix} pick={pick} devnetTitle={d.devnetTitle} legend={d.legend} choices={d.choices} columns={d.columns} />

        <ExamplesFrame
          idPrefix={d.idPrefix}
          title={d.examples.title(network)}
          refreshLabel={d.examples.refreshLabel}
          examples={examples}
          loading={d.examples.loading(network)}
          errorLead={d.examples.errorLead}
        >
          {(data) => <ChainValues view={d.examples.view(data, network)} />}
        </ExamplesFrame>

        {params.kind === "form" && d.editor.kind === "form" ? (
          <FormParams idPrefix={d.idPrefix} editor={d.editor} method={method} values={params.values} form={params.form} examples={examples.data} onChange={setFormValue} />
        ) : params.kind === "json" ? (
          <JsonParams idPrefix={d.idPrefix} method={method} text={params.text} edited={params.edited} check={params.check} onChange={setJson} onReset={() => setJson(undefined)} />
        ) : null}
      </RequestCard>

      <ResponseView exchange={sender.exchange} pending={sender.pending} />

      {d.settings ? <SettingsCard idPrefix={d.idPrefix} settings={d.settings} projectId={projectId} origin={origin} network={network} keyItem={sender.key} /> : null}
    </div>
  );
}

/**
 * One tab of the playground, for any chain family, from its descriptor: network and method, the
 * values read from the chain, the parameters (a form of checked fields, or JSON params), and Send,
 * which calls the public endpoint from this browser with the project's key.
 */
export function Playground({ family, ...props }: PlaygroundProps) {
  const d = clientFamily(family)?.playground;
  return d ? <FamilyPlayground d={d} {...props} /> : null;
}
