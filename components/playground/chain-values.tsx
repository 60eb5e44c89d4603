import { Fragment } from "react";
import { cn } from "@/components/ui/cn";
import type { ExampleRow, ExamplesView } from "@/lib/chains/descriptor";

const LOOKS: Record<NonNullable<ExampleRow["look"]>, string> = {
  mono: "font-mono text-fg",
  wrap: "font-mono break-all text-fg",
  muted: "text-muted",
};

/** The values a tab read from the chain, as its family lists them, or why there are none yet. */
export function ChainValues({ view }: { view: ExamplesView }) {
  if ("empty" in view) {
    return (
      <div data-testid={view.empty.testId} className="text-sm text-muted">
        <p className="font-medium text-fg">{view.empty.title}</p>
        <p>{view.empty.body}</p>
      </div>
    );
  }
  return (
    <>
      <dl data-testid={view.testId} className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[auto_minmax(0,1fr)]">
        {view.rows.map((r) => (
          <Fragment key={r.term}>
            <dt className="text-muted">{r.term}</dt>
            <dd data-testid={r.testId} className={cn(LOOKS[r.look ?? "mono"])} title={r.title}>
              {r.value}
            </dd>
          </Fragment>
        ))}
      </dl>
      <p className="text-xs text-muted">{view.note}</p>
    </>
  );
}
