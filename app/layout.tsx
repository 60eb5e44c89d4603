import "@fontsource-variable/inter";
import "./globals.css";
import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { Providers } from "@/components/providers";
import { ThemeScript } from "@/components/theme/theme-script";

export const metadata: Metadata = {
  title: { default: "Blockgate", template: "%s · Blockgate" },
  description: "Self-hostable blockchain node access: API keys, endpoints and webhooks.",
};

export const viewport: Viewport = {
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#f7f8fa" },
    { media: "(prefers-color-scheme: dark)", color: "#0c0f14" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Set by proxy.ts for the Content-Security-Policy; reading it renders every page per request.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    // The theme script adds class="dark" to <html> before first paint; React does not manage
    // that attribute, and suppressHydrationWarning covers this one element.
    <html lang="en" suppressHydrationWarning>
      <head>
        <ThemeScript nonce={nonce} />
      </head>
      <body className="min-h-dvh bg-canvas font-sans text-fg">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
