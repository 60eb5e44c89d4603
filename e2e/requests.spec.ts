import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

// eth_chainId is answered from the network catalog: no node or devnet is needed for it.
const NETWORK = "ethereum-mainnet";

test("a call sent from the playground appears in the request log, with its details and no key", async ({ page }) => {
  test.setTimeout(120_000);
  await signUp(page, uniqueEmail("requests"));
  const projectId = await completeOnboarding(page);

  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=eth_chainId`);
  await expect(page.getByRole("radio", { name: "eth_chainId", exact: true })).toBeChecked();
  await page.getByRole("button", { name: "Send", exact: true }).click();
  await expect(page.getByTestId("response-status")).toContainText("200");

  await page.getByRole("navigation", { name: "Project sections" }).getByRole("link", { name: "Requests" }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/requests$`));
  await expect(page.getByRole("heading", { name: "Requests", level: 1 })).toBeVisible();

  // Written within a second and refreshed every few seconds: no reload needed.
  const row = page.getByRole("row").filter({ hasText: "eth_chainId" });
  await expect(row).toHaveCount(1, { timeout: 20_000 });
  await expect(row.getByRole("cell")).toContainText(["", "node", NETWORK, "eth_chainId", "200", /ms/, /\d/, "Default key"]);

  // Filters: another interface hides it; the right method shows it.
  await page.getByLabel("Interface").selectOption("rpc");
  await expect(page.getByText("No requests match these filters")).toBeVisible();
  await page.getByLabel("Interface").selectOption("node");
  await page.getByLabel("Method").fill("eth_chainId");
  await page.getByLabel("Method").press("Enter");
  await expect(row).toHaveCount(1);

  // Details, opened from the keyboard, closed with Escape.
  await row.getByRole("button", { name: /Details of eth_chainId/ }).focus();
  await page.keyboard.press("Enter");
  const details = page.getByRole("region", { name: "Request details" });
  await expect(details).toBeVisible();
  await expect(details.getByRole("heading", { name: "Params" })).toBeVisible();
  await expect(details.locator("pre").nth(1)).toContainText(/"method":\s*"eth_chainId"/);
  await expect(details.locator("pre").nth(2)).toContainText(/"result"/);
  const shown = await details.textContent();
  expect(shown).not.toMatch(/bg_[1-9A-HJ-NP-Za-km-z]{5,}/);
  await page.keyboard.press("Escape");
  await expect(details).toBeHidden();
  // The focus is back on the row that opened them.
  const opener = row.getByRole("button", { name: /Details of eth_chainId/ });
  await expect(opener).toBeFocused();

  // On a phone the details open as a drawer over the page, where the user is, not under the log.
  await page.setViewportSize({ width: 390, height: 844 });
  await opener.focus();
  await page.keyboard.press("Enter");
  const drawer = page.getByRole("dialog", { name: "Request details" });
  await expect(drawer).toBeVisible();
  // The focus moved into it, onto its title.
  await expect(drawer.locator(":focus")).toHaveText("Request details");
  const box = await drawer.boundingBox();
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.y).toBeLessThan(844);
  await expect(drawer.locator("pre").nth(1)).toContainText(/"method":\s*"eth_chainId"/);
  // Keyboard only: Tab reaches the Close button, which closes it and gives the focus back.
  await page.keyboard.press("Tab");
  await expect(drawer.getByRole("button", { name: "Close request details" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(drawer).toBeHidden();
  await expect(opener).toBeFocused();
  // Escape too.
  await page.keyboard.press("Enter");
  await expect(drawer).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(drawer).toBeHidden();
  await expect(opener).toBeFocused();
  await page.setViewportSize({ width: 1280, height: 720 });

  // Recent traffic on the Usage page counts it.
  await page.getByRole("navigation", { name: "Project sections" }).getByRole("link", { name: "Usage", exact: true }).click();
  const traffic = page.getByRole("region", { name: "Recent traffic" });
  await expect(traffic.getByRole("row", { name: /^EVM JSON-RPC/ }).getByRole("cell").first()).toHaveText("1");
  await expect(traffic.getByRole("row", { name: /^All interfaces/ }).getByRole("cell").nth(1)).toHaveText("0");
});
