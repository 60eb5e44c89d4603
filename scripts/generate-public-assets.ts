// Renders the console's static images into public/ with headless Chromium: favicon.ico (16, 32
// and 48 px PNGs in one ICO file), logo.svg and social-card.png (1200×630, the Open Graph and
// Twitter card). The drawing is app/icon.svg, the same mark as components/brand/logo.tsx.
// Run with `npm run public-assets` after changing the mark or the card; commit the results.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser } from "@playwright/test";
import { componentLogger } from "../lib/log";

const log = componentLogger("public-assets");
const root = process.cwd();
const PUBLIC = path.join(root, "public");
const ICON_SIZES = [16, 32, 48];
/** The dark theme of app/globals.css. */
const COLORS = { canvas: "#0c0f14", surface: "#13171e", line: "#262c37", fg: "#e7eaf0", muted: "#a0a9b8", accent: "#5b54e8", accentText: "#a9b1ff" };

const dataUrl = (type: string, bytes: Buffer | string) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;

/** An ICO file holding PNG images, each entry pointing at its PNG (https://en.wikipedia.org/wiki/ICO_(file_format)). */
function encodeIco(images: readonly { size: number; png: Buffer }[]): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(images.length, 4);
  const entries: Buffer[] = [];
  let offset = header.length + 16 * images.length;
  for (const { size, png } of images) {
    const entry = Buffer.alloc(16);
    entry.writeUInt8(size >= 256 ? 0 : size, 0); // width (0 means 256)
    entry.writeUInt8(size >= 256 ? 0 : size, 1); // height
    entry.writeUInt8(0, 2); // no palette
    entry.writeUInt8(0, 3); // reserved
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(png.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += png.length;
    entries.push(entry);
  }
  return Buffer.concat([header, ...entries, ...images.map((i) => i.png)]);
}

async function renderIconPng(browser: Browser, svg: string, size: number): Promise<Buffer> {
  const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
  try {
    await page.setContent(`<html><body style="margin:0;background:transparent"><img src="${dataUrl("image/svg+xml", svg)}" width="${size}" height="${size}" style="display:block"></body></html>`);
    await page.locator("img").evaluate((img: HTMLImageElement) => img.decode());
    return await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
  } finally {
    await page.close();
  }
}

function socialCardHtml(svg: string, font: Buffer): string {
  return `<!doctype html>
<html>
<head>
<style>
  @font-face { font-family: "Inter"; font-weight: 100 900; src: url(${dataUrl("font/woff2", font)}) format("woff2"); }
  html, body { margin: 0; width: 1200px; height: 630px; }
  body {
    font-family: "Inter", sans-serif;
    font-feature-settings: "cv11", "ss01";
    -webkit-font-smoothing: antialiased;
    color: ${COLORS.fg};
    background:
      radial-gradient(900px 520px at 88% -10%, rgba(91, 84, 232, 0.42), transparent 62%),
      radial-gradient(700px 420px at -5% 110%, rgba(91, 84, 232, 0.18), transparent 60%),
      ${COLORS.canvas};
    display: flex;
    flex-direction: column;
    justify-content: space-between;
    padding: 88px 96px 80px;
    box-sizing: border-box;
  }
  .brand { display: flex; align-items: center; gap: 28px; }
  .brand img { width: 104px; height: 104px; }
  .brand span { font-size: 76px; font-weight: 650; letter-spacing: -0.03em; }
  h1 { margin: 0; font-size: 68px; line-height: 1.1; font-weight: 600; letter-spacing: -0.025em; }
  h1 em { font-style: normal; color: ${COLORS.accentText}; }
  ul { display: flex; gap: 16px; margin: 0; padding: 0; list-style: none; }
  li { font-size: 26px; font-weight: 500; color: ${COLORS.muted}; padding: 12px 24px; border: 2px solid ${COLORS.line}; border-radius: 999px; background: ${COLORS.surface}; }
</style>
</head>
<body>
  <div class="brand"><img src="${dataUrl("image/svg+xml", svg)}" alt=""><span>Blockgate</span></div>
  <h1>Self-hostable<br><em>blockchain node access</em></h1>
  <ul><li>API keys</li><li>EVM &amp; CometBFT endpoints</li><li>Webhooks</li></ul>
</body>
</html>`;
}

async function renderSocialCard(browser: Browser, svg: string): Promise<Buffer> {
  const font = await readFile(path.join(root, "node_modules", "@fontsource-variable", "inter", "files", "inter-latin-wght-normal.woff2"));
  const page = await browser.newPage({ viewport: { width: 1200, height: 630 }, deviceScaleFactor: 1 });
  try {
    await page.setContent(socialCardHtml(svg, font));
    await page.evaluate(async () => {
      await document.fonts.ready;
      await Promise.all([...document.images].map((img) => img.decode()));
    });
    return await page.screenshot({ type: "png" });
  } finally {
    await page.close();
  }
}

async function writeIfChanged(name: string, bytes: Buffer | string): Promise<void> {
  const file = path.join(PUBLIC, name);
  const before = await readFile(file).catch(() => null);
  if (before?.equals(Buffer.from(bytes))) {
    log.info(`public/${name} is up to date`);
    return;
  }
  await writeFile(file, bytes);
  log.info(`wrote public/${name}`);
}

async function main(): Promise<void> {
  const svg = (await readFile(path.join(root, "app", "icon.svg"), "utf8")).trim();
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const icons = [];
    for (const size of ICON_SIZES) icons.push({ size, png: await renderIconPng(browser, svg, size) });
    await writeIfChanged("favicon.ico", encodeIco(icons));
    await writeIfChanged("logo.svg", `${svg}\n`);
    await writeIfChanged("social-card.png", await renderSocialCard(browser, svg));
  } finally {
    await browser.close();
  }
}

main().catch((e: unknown) => {
  log.error({ err: e }, "could not render the public assets");
  process.exitCode = 1;
});
