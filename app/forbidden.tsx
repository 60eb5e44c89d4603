import type { Metadata } from "next";
import { Forbidden } from "@/components/console/forbidden";

export const metadata: Metadata = { title: "No access" };

/** Rendered with HTTP 403 by forbidden() (needs experimental.authInterrupts in next.config.ts). */
export default function ForbiddenPage() {
  return <Forbidden />;
}
