import { Logo } from "@/components/brand/logo";
import { ButtonLink } from "@/components/ui/button";

/** Shown instead of the console for another user's project: no project data at all. */
export function Forbidden() {
  return (
    <main className="flex min-h-dvh flex-col items-center justify-center px-6 py-16 text-center">
      <Logo className="mb-10" />
      <p className="text-sm font-semibold text-danger-text">403</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight">You don&apos;t have access to this project</h1>
      <p className="mt-3 max-w-sm text-sm text-muted">
        It belongs to another account. If you think you should have access, ask the project owner.
      </p>
      <ButtonLink href="/" className="mt-8">
        Go to your projects
      </ButtonLink>
    </main>
  );
}
