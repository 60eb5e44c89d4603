import { EVM_METHODS } from "../lib/evm/methods";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

// eth_chainId is answered from the network catalog: no node or devnet is needed for it.
const NETWORK = "ethereum-mainnet";
const CALLS = 3;
const CU = CALLS * EVM_METHODS.eth_chainId!.cu;

test("requests sent from the playground appear on the Usage page within seconds, in the right breakdown, and in its CSV", async ({ page }) => {
  test.setTimeout(120_000);
  await signUp(page, uniqueEmail("usage"));
  const projectId = await completeOnboarding(page);

  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=eth_chainId`);
  await expect(page.getByRole("tab", { name: "EVM JSON-RPC" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByRole("radio", { name: "eth_chainId", exact: true })).toBeChecked();
  const send = page.getByRole("button", { name: "Send", exact: true });
  for (let i = 0; i < CALLS; i++) {
    await send.click();
    await expect(page.getByTestId("response-status")).toContainText("200");
  }

  await page.getByRole("link", { name: "Usage" }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/usage$`));
  await expect(page.getByLabel("Time range")).toHaveValue("1h");
  await expect(page.getByLabel("Break down by")).toHaveValue("method");

  // Flushed within a second and refreshed every 5 s: no reload needed.
  const breakdown = page.getByTestId("usage-breakdown");
  const row = (name: string) => breakdown.getByRole("row", { name: new RegExp(`^${name.replace(/[()/]/g, "\\$&")}`) });
  await expect(row("eth_chainId (node)")).toBeVisible({ timeout: 20_000 });
  await expect(row("eth_chainId (node)").getByRole("cell")).toHaveText([String(CU), String(CALLS), "0"]);
  await expect(page.getByTestId("usage-totals")).toContainText(`Compute units${CU}`);
  await expect(page.getByRole("progressbar", { name: "Allowance" })).toHaveAttribute("aria-valuenow", String(CU));
  await expect(page.getByTestId("allowance-text")).toContainText(`${CU} of 1,000,000 CU used`);

  // Other breakdowns of the same numbers.
  await page.getByLabel("Break down by").selectOption("endpoint");
  await expect(row("EVM JSON-RPC (/node)").getByRole("cell")).toHaveText([String(CU), String(CALLS), "0"]);
  await page.getByLabel("Break down by").selectOption("status");
  await expect(row("Success (2xx)").getByRole("cell")).toHaveText([String(CU), String(CALLS), "0"]);
  await page.getByLabel("Break down by").selectOption("key");
  await expect(row("Default key").getByRole("cell")).toHaveText([String(CU), String(CALLS), "0"]);
  await page.getByLabel("Time range").selectOption("period");
  await expect(row("Default key").getByRole("cell")).toHaveText([String(CU), String(CALLS), "0"]);

  // The CSV export has the same numbers as what is shown.
  const href = await page.getByRole("link", { name: "Export CSV" }).getAttribute("href");
  expect(href).toMatch(/format=csv/);
  const csv = await (await page.request.get(href!)).text();
  const rows = csv.trim().split("\n").slice(1).map((l) => l.split(","));
  const all = rows.filter((r) => r[1] === "all");
  expect(all.reduce((s, r) => s + Number(r[3]), 0)).toBe(CU);
  expect(all.reduce((s, r) => s + Number(r[4]), 0)).toBe(CALLS);

  // The project Overview shows the day's CU next to a sparkline.
  await page.getByRole("link", { name: "Overview" }).click();
  await expect(page.getByTestId("sparkline-total")).toContainText(String(CU));
});
