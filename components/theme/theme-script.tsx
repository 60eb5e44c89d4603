"use client";

import { THEME_SCRIPT } from "./theme";

/**
 * The pre-paint theme script. In the server HTML it is a normal script that runs while the
 * page parses; when React renders it on the client it becomes inert text/plain (React would
 * not run it anyway, and would warn about a script tag). suppressHydrationWarning covers the
 * type difference.
 */
export function ThemeScript() {
  return (
    <script
      type={typeof window === "undefined" ? "text/javascript" : "text/plain"}
      suppressHydrationWarning
      dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }}
    />
  );
}
