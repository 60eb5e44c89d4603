import { execFileSync } from "node:child_process";
import path from "node:path";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

// Playwright runs from the repository root (playwright.config.ts).
const root = process.cwd();

/** Sets a project's plan with the admin CLI, against the server's own (embedded) database. */
function setPlan(projectId: string, plan: string): void {
  execFileSync(process.execPath, [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "bin/admin.ts", "set-plan", "--project", projectId, "--plan", plan], {
    cwd: root,
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR, EMBEDDED_PG_PORT: process.env.E2E_PG_PORT, DATABASE_URL: "" },
  });
}

test("on a paid plan a user creates a second key, locks it to an origin, and sees a refused call from the playground in the request log", async ({ page, baseURL, consoleErrors }) => {
  test.setTimeout(120_000);
  await signUp(page, uniqueEmail("keys"));
  const projectId = await completeOnboarding(page);

  // The free plan has one key: a second is refused with the limit and a way out.
  await page.goto(`/projects/${projectId}/keys`);
  await page.getByLabel("Key name").fill("Web app");
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByTestId("form-error")).toHaveText("The Starter (free) plan includes one API key. Upgrade the plan to create more keys.");

  setPlan(projectId, "developer");
  await page.reload();
  await expect(page.getByText("1 of 5 in use.")).toBeVisible();
  await page.getByLabel("Key name").fill("Web app");
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByText("Key “Web app” created.")).toBeVisible();
  const row = page.getByRole("rowgroup").filter({ has: page.getByRole("rowheader", { name: /Web app/ }) });
  await expect(row.getByTestId("key-last-used")).toHaveText("Never");

  // The allowlist editor validates inline, then saves the normalised list.
  await row.getByRole("button", { name: "Edit Web app" }).click();
  const origins = row.getByLabel("Allowed origins");
  await origins.fill("https://app.example.com/login");
  await row.getByRole("button", { name: "Save allowlists" }).click();
  await expect(row.getByText('"https://app.example.com/login" is not an origin')).toBeVisible();
  await expect(origins).toHaveAttribute("aria-invalid", "true");
  // A space is a typo inside one entry, not a separator of two.
  await origins.fill("https://exa mple.com");
  await row.getByRole("button", { name: "Save allowlists" }).click();
  await expect(row.getByText('"https://exa mple.com" is not an origin')).toBeVisible();
  await origins.fill("HTTPS://App.Example.com/");
  await row.getByRole("button", { name: "Save allowlists" }).click();
  await expect(row.getByText("Allowlists saved.")).toBeVisible();
  await expect(origins).toHaveValue("https://app.example.com");
  await expect(row.getByTestId("key-allowlist-badge")).toHaveText("Allowlist: 1 origin");

  // The playground sends from the console's origin, which this key does not allow.
  await page.goto(`/projects/${projectId}/playground?network=ethereum-mainnet&method=eth_chainId`);
  const picker = page.getByLabel("API key");
  await picker.selectOption({ label: (await picker.getByRole("option", { name: /^Web app/ }).textContent())! });
  await page.getByRole("button", { name: "Send", exact: true }).click();
  await expect(page.getByTestId("response-status")).toContainText("403");
  await expect(page.getByText(`The origin ${baseURL} is not in this key's allowlist.`).first()).toBeVisible();
  expect(consoleErrors).toEqual(["Failed to load resource: the server responded with a status of 403 (Forbidden)"]);
  consoleErrors.length = 0;

  // The default key has no allowlist and still works from here.
  await picker.selectOption({ label: (await picker.getByRole("option", { name: /^Default key/ }).textContent())! });
  await page.getByRole("button", { name: "Send", exact: true }).click();
  await expect(page.getByTestId("response-status")).toContainText("200");

  // The refused call is in the request log, under the key that was refused, beside the one that passed.
  await page.getByRole("navigation", { name: "Project sections" }).getByRole("link", { name: "Requests" }).click();
  await expect(page.getByRole("heading", { name: "Requests", level: 1 })).toBeVisible();
  const refused = page.getByRole("row").filter({ hasText: "403" });
  await expect(refused).toHaveCount(1, { timeout: 20_000 });
  await expect(refused.getByRole("cell")).toContainText(["", "node", "ethereum-mainnet", "rejected", "403", /ms/, "0", "Web app"]);
  const passed = page.getByRole("row").filter({ hasText: "eth_chainId" });
  await expect(passed).toHaveCount(1);
  await expect(passed.getByRole("cell")).toContainText(["", "node", "ethereum-mainnet", "eth_chainId", "200", /ms/, /\d/, "Default key"]);

  // Revoke the new key (with confirmation): it leaves the list.
  await page.goto(`/projects/${projectId}/keys`);
  await row.getByRole("button", { name: "Edit Web app" }).click();
  await row.getByRole("button", { name: "Revoke key" }).click();
  const dialog = page.getByRole("dialog", { name: "Revoke “Web app”?" });
  await dialog.getByRole("button", { name: "Revoke key" }).click();
  await expect(page.getByRole("rowheader", { name: /Web app/ })).toHaveCount(0);
  await expect(page.getByText("1 of 5 in use.")).toBeVisible();
});

test("on a phone the keys page does not scroll sideways, and renaming a key says so", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signUp(page, uniqueEmail("keys-phone"));
  const projectId = await completeOnboarding(page);

  await page.goto(`/projects/${projectId}/keys`);
  const row = page.getByRole("rowgroup").filter({ has: page.getByRole("rowheader", { name: /Default key/ }) });
  await expect(row.getByTestId("api-key-masked")).toBeVisible();
  // The table scrolls inside its card; the page itself is no wider than the screen.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);

  await row.getByRole("button", { name: "Edit Default key" }).click();
  await row.getByLabel("Key name").fill("Backend");
  await row.getByRole("button", { name: "Rename" }).click();
  await expect(page.getByRole("rowheader", { name: /Backend/ })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Key renamed to “Backend”." })).toBeVisible();
});
