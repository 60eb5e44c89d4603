import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

test("console pages carry a nonce Content-Security-Policy, and their own scripts run under it", async ({ page }) => {
  // The fixture fails the test on any console error, which is where Chromium reports CSP violations.
  await page.emulateMedia({ colorScheme: "dark" });
  const res = await page.goto("/sign-in");
  const policy = res!.headers()["content-security-policy"] ?? "";
  const nonce = /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic'/.exec(policy)?.[1];
  expect(nonce, policy).toBeTruthy();
  expect(policy).not.toContain("unsafe-inline");
  expect(policy).toContain("frame-ancestors 'none'");
  // Every script of the page carries this response's nonce.
  const scripts = (await res!.text()).match(/<script\b[^>]*>/g) ?? [];
  expect(scripts.length).toBeGreaterThan(0);
  for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);

  // The inline theme script ran (dark scheme applied before paint) and React hydrated the form.
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Enter a valid email address", { exact: false })).toBeVisible();

  // A fresh nonce for every response.
  const again = await page.goto("/sign-in");
  expect(again!.headers()["content-security-policy"]).not.toContain(`'nonce-${nonce}'`);

  // Signed in, the console pages run clean under the policy too.
  await signUp(page, uniqueEmail("csp"));
  const projectId = await completeOnboarding(page, "Policy Reader");
  for (const section of ["keys", "usage", "settings", "playground"]) {
    const res = await page.goto(`/projects/${projectId}/${section}`);
    expect(res!.headers()["content-security-policy"]).toMatch(/'nonce-[A-Za-z0-9+/=]+'/);
    await expect(page.getByRole("main")).toBeVisible();
  }
});

test("a cross-site form post to the console API is refused, and changes nothing", async ({ page, context, baseURL }) => {
  await signUp(page, uniqueEmail("csrf"));
  await completeOnboarding(page, "Csrf Target");

  // Another site's page that posts a JSON-looking text/plain form to the console API: the shape
  // of CSRF that needs no CORS preflight.
  const evil = await context.newPage();
  await evil.route("http://evil.example/**", (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<form method="post" action="${baseURL}/api/projects" enctype="text/plain"><input name='{"name":"pwned","x":"' value='"}'></form><script>document.forms[0].submit()</script>`,
    }),
  );
  const [response] = await Promise.all([
    evil.waitForResponse((r) => r.url() === `${baseURL}/api/projects` && r.request().method() === "POST"),
    evil.goto("http://evil.example/"),
  ]);
  expect(response.request().headers()["origin"]).toBe("http://evil.example");
  expect(response.status()).toBe(403);
  expect(await response.json()).toEqual({ code: "PERMISSION_DENIED", message: expect.stringContaining("Cross-site request refused") });
  await evil.close();

  // The same request with the console's own origin but as text/plain is refused as well.
  const plain = await page.request.post("/api/projects", { headers: { "Content-Type": "text/plain" }, data: '{"name":"pwned"}' });
  expect(plain.status()).toBe(400);
  expect(await plain.json()).toEqual({ code: "INVALID_PARAMETER", message: "Send the request body as JSON, with the header Content-Type: application/json." });

  const list = await page.request.get("/api/projects");
  expect(((await list.json()) as { items: { name: string }[] }).items.map((p) => p.name)).toEqual(["My First Project"]);
});
