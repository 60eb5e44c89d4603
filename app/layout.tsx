import "@fontsource-variable/inter";
import "./globals.css";
import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { publicOrigin } from "@/components/console/project-access";
import { Providers } from "@/components/providers";
import { ThemeScript } from "@/components/theme/theme-script";

const DESCRIPTION = "Self-hostable blockchain node access: API keys, endpoints and webhooks.";
/** public/social-card.png, rendered by scripts/generate-public-assets.ts. */
const SOCIAL_CARD = { url: "/social-card.png", width: 1200, height: 630, alt: "Blockgate: self-hostable blockchain node access" };

/**
 * Per request, because the public URL (which makes the card's URL absolute, as Open Graph
 * requires) is configured when the server starts, not when the console is built.
 */
export function generateMetadata(): Metadata {
  return {
    metadataBase: new URL(publicOrigin()),
    title: { default: "Blockgate", template: "%s · Blockgate" },
    description: DESCRIPTION,
    // app/icon.svg comes first (Next.js adds it); the ICO is for browsers without SVG icons.
    icons: { icon: [{ url: "/favicon.ico", sizes: "16x16 32x32 48x48" }] },
    openGraph: { type: "website", siteName: "Blockgate", title: "Blockgate", description: DESCRIPTION, images: [SOCIAL_CARD] },
    twitter: { card: "summary_large_image", title: "Blockgate", description: DESCRIPTION, images: [SOCIAL_CARD] },
  };
}

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
