import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

/**
 * Records `cu` as used today in the service's own database (the daily rollup the allowance is read
 * from): using 400 million CU through the API would take days at the plans' CU per second.
 */
async function seedUsage(projectId: string, cu: number): Promise<void> {
  const credentials = JSON.parse(readFileSync(path.join(process.env.E2E_DATA_DIR!, "postgres.json"), "utf8")) as { appPassword: string };
  const client = new pg.Client({ connectionString: `postgresql://blockgate:${credentials.appPassword}@127.0.0.1:${process.env.E2E_PG_PORT}/blockgate` });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO usage_days (project_id, key_id, network, api, endpoint, day, cu, requests)
       SELECT $1, id, 'ethereum-mainnet', 'node', 'eth_chainId', date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', $2, 1
       FROM api_keys WHERE project_id = $1 LIMIT 1`,
      [projectId, cu],
    );
  } finally {
    await client.end();
  }
}

test("switch plans from the Plans page, see the current one marked and the change in the history, and the allowance banner past 80 %", async ({ page }) => {
  test.setTimeout(120_000);
  const email = uniqueEmail("plans");
  await signUp(page, email);
  const projectId = await completeOnboarding(page);

  // No banner below 80 %.
  await expect(page.getByTestId("allowance-banner")).toHaveCount(0);

  await page.getByRole("link", { name: "Plans", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/plan$`));
  const card = (id: string) => page.getByTestId(`plan-${id}`);
  await expect(card("FREE")).toHaveAttribute("aria-current", "true");
  await expect(card("FREE")).toContainText("Current plan");
  await expect(card("FREE")).toContainText("1,000,000 CU per day");
  await expect(card("DEVELOPER")).toContainText("450,000,000 CU per month");
  await expect(card("DEVELOPER")).toContainText("600 CU/s");
  // The webhook queue's bounds, per plan.
  const bound = (plan: string, label: string) => card(plan).locator("dt", { hasText: label }).locator("xpath=following-sibling::dd[1]");
  await expect(bound("FREE", "Messages waiting, per webhook")).toHaveText("1,000");
  await expect(bound("FREE", "Messages waiting, per project")).toHaveText("2,000");
  await expect(bound("FREE", "Blocks per replay")).toHaveText("100");
  await expect(bound("BUSINESS", "Blocks per replay")).toHaveText("10,000");
  const overage = page.getByRole("switch");
  await expect(overage).toBeDisabled();

  await page.getByRole("button", { name: "Switch to Developer" }).click();
  await expect(card("DEVELOPER")).toHaveAttribute("aria-current", "true");
  await expect(card("DEVELOPER")).toContainText("Current plan");
  await expect(card("FREE")).not.toContainText("Current plan");
  await expect(page.getByTestId("plan-history")).toContainText(`Starter (free) → Developer`);
  await expect(page.getByTestId("plan-history")).toContainText(`by ${email}`);

  // Paid: overage can be turned on.
  await expect(overage).toBeEnabled();
  await overage.check();
  await expect(page.getByTestId("plan-history")).toContainText("Overage turned on");
  await expect(overage).toBeChecked();

  // 400 of 450 million CU this month: 88 %, on every page of the project.
  await seedUsage(projectId, 400_000_000);
  await page.reload();
  const banner = page.getByTestId("allowance-banner");
  await expect(banner).toContainText("This project used 88 % of this month's allowance");
  await expect(banner).toContainText("400,000,000 of 450,000,000 CU on the Developer plan");
  // Overage is on: nothing will be refused at 100 %.
  await expect(banner).toContainText("Overage is on: at 100 % calls are still served, and what passes the allowance is metered as overage.");
  await expect(banner).not.toContainText("refused");
  await expect(banner).toContainText("It resets at");
  await page.getByRole("link", { name: "Keys", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/keys$`));
  await expect(banner).toBeVisible();
  await banner.getByRole("link", { name: "See plans" }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/plan$`));

  // Back on the free plan the same usage is past its daily allowance: the 100 % banner.
  await page.getByRole("button", { name: "Switch to Starter (free)" }).click();
  await expect(card("FREE")).toHaveAttribute("aria-current", "true");
  await expect(banner).toContainText("This project used all of today's allowance");
  await expect(banner).toContainText("refused with 429 EXCEEDED_QUOTA_LIMIT");
  await expect(overage).not.toBeChecked();
});
