"use client";

import { THEME_SCRIPT } from "./theme";

/**
 * The pre-paint theme script. In the server HTML it is a normal script that runs while the
 * page parses; when React renders it on the client it becomes inert text/plain (React would
 * not run it anyway, and would warn about a script tag). suppressHydrationWarning covers the
 * type difference, and the nonce the browser hides from the DOM once the script ran.
 */
export function ThemeScript({ nonce }: { nonce?: string }) {
  return (
    <script
      type={typeof window === "undefined" ? "text/javascript" : "text/plain"}
      nonce={nonce}
      suppressHydrationWarning
      dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }}
    />
  );
}
