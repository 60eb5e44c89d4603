"use client";

import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { controlClasses } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import type { FormCheck, FormEditor, ParamValues, ParamsCheck } from "@/lib/chains/descriptor";
import { ParamField } from "./param-field";

/** A form's fields, each with its check and its example from the chain. */
export function FormParams({
  idPrefix,
  editor,
  method,
  values,
  form,
  examples,
  onChange,
}: {
  idPrefix: string;
  editor: FormEditor;
  method: string;
  values: ParamValues;
  form: FormCheck;
  examples: unknown;
  onChange: (name: string, value: string) => void;
}) {
  const fields = editor.fields(method);
  return (
    <fieldset className="space-y-3">
      <legend className="text-sm font-medium text-fg">
        Parameters of <code className="font-mono">{editor.legend(method)}</code>
      </legend>
      {fields.length === 0 ? (
        <p className="text-sm text-muted">{editor.noParams}</p>
      ) : (
        <>
          {fields.some((f) => f.spec.required) ? (
            <p className="text-xs text-muted">
              <span aria-hidden="true" className="text-danger-text">
                *
              </span>{" "}
              Required
            </p>
          ) : null}
          <div className="grid gap-x-4 gap-y-5 sm:grid-cols-2">
            {fields.map((f) => (
              <div key={`${method}-${f.spec.name}`} className={f.wide ? "sm:col-span-2" : undefined}>
                <ParamField
                  id={`${idPrefix}-${method}-${f.spec.name}`}
                  spec={f.spec}
                  value={values[f.spec.name] ?? ""}
                  check={form.checks[f.spec.name] ?? { missing: false, error: null, query: null }}
                  example={editor.example(method, f.spec.name, examples)}
                  summary={f.summary}
                  placeholder={f.placeholder}
                  onChange={(v) => onChange(f.spec.name, v)}
                />
              </div>
            ))}
          </div>
        </>
      )}
    </fieldset>
  );
}

/** Positional JSON-RPC params as JSON text: the template filled from the chain until edited. */
export function JsonParams({
  idPrefix,
  method,
  text,
  edited,
  check,
  onChange,
  onReset,
}: {
  idPrefix: string;
  method: string;
  text: string;
  edited: boolean;
  check: ParamsCheck;
  onChange: (text: string) => void;
  onReset: () => void;
}) {
  const id = `${idPrefix}-params`;
  return (
    <div className="space-y-1.5">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <Label htmlFor={id}>
          Params of <code className="font-mono">{method}</code> (JSON array)
        </Label>
        {edited ? (
          <Button variant="ghost" size="sm" onClick={onReset}>
            Reset to template
          </Button>
        ) : null}
      </div>
      <textarea
        id={id}
        value={text}
        onChange={(e) => onChange(e.target.value)}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        rows={Math.min(14, Math.max(3, text.split("\n").length + 1))}
        aria-invalid={check.ok ? undefined : true}
        aria-describedby={check.ok ? `${id}-hint` : `${id}-error ${id}-hint`}
        className={cn(controlClasses, "h-auto py-2 font-mono text-[12.5px] leading-relaxed")}
      />
      {check.ok ? null : (
        <p id={`${id}-error`} data-testid="params-error" className="text-sm text-danger-text">
          {check.error}
        </p>
      )}
      <p id={`${id}-hint`} className="text-xs text-muted">
        Positional JSON-RPC params; {edited ? "edited by you." : "filled from the chain's values above."}
      </p>
    </div>
  );
}
