import { expect, test } from "./fixtures";

const ASSETS: [path: string, contentType: RegExp][] = [
  ["/favicon.ico", /^image\/(x-icon|vnd\.microsoft\.icon)/],
  ["/robots.txt", /^text\/plain/],
  ["/logo.svg", /^image\/svg\+xml/],
  ["/social-card.png", /^image\/png/],
];

test("the console's static assets are served", async ({ request }) => {
  for (const [path, contentType] of ASSETS) {
    const res = await request.get(path);
    expect(res.status(), path).toBe(200);
    expect(res.headers()["content-type"], path).toMatch(contentType);
    expect((await res.body()).length, path).toBeGreaterThan(0);
  }
  const ico = await (await request.get("/favicon.ico")).body();
  // ICONDIR: reserved 0, type 1 (icon), then the image count; each image here is a PNG.
  expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([0, 1, 3]);
  expect(ico.subarray(ico.readUInt32LE(6 + 12), ico.readUInt32LE(6 + 12) + 4).toString("latin1")).toBe("\x89PNG");
  const card = await (await request.get("/social-card.png")).body();
  expect([card.readUInt32BE(16), card.readUInt32BE(20)]).toEqual([1200, 630]);
  expect(await (await request.get("/robots.txt")).text()).toMatch(/^User-agent: \*\nDisallow: \/$/m);
});

test("pages point browsers and link previews at them, with absolute URLs from PUBLIC_URL", async ({ page, baseURL }) => {
  await page.goto("/sign-in");
  const head = page.locator("head");
  await expect(head.locator('link[rel="icon"][href="/favicon.ico"]')).toHaveCount(1);
  await expect(head.locator('meta[property="og:image"]')).toHaveAttribute("content", `${baseURL}/social-card.png`);
  await expect(head.locator('meta[property="og:image:width"]')).toHaveAttribute("content", "1200");
  await expect(head.locator('meta[property="og:image:height"]')).toHaveAttribute("content", "630");
  await expect(head.locator('meta[name="twitter:card"]')).toHaveAttribute("content", "summary_large_image");
  await expect(head.locator('meta[name="twitter:image"]')).toHaveAttribute("content", `${baseURL}/social-card.png`);
});
