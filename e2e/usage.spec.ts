import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { EVM_METHODS } from "../lib/evm/methods";
import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

/** Runs a statement on the service's own database (to record usage that would take days to make). */
async function sql(text: string, values: unknown[]): Promise<void> {
  const credentials = JSON.parse(readFileSync(path.join(process.env.E2E_DATA_DIR!, "postgres.json"), "utf8")) as { appPassword: string };
  const client = new pg.Client({ connectionString: `postgresql://blockgate:${credentials.appPassword}@127.0.0.1:${process.env.E2E_PG_PORT}/blockgate` });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** Records `cu` as the project's use today, in the daily rollup the allowance is read from. */
async function setUsedToday(projectId: string, cu: number): Promise<void> {
  await sql(
    `INSERT INTO usage_days (project_id, key_id, network, api, endpoint, day, cu, requests)
     SELECT $1, id, 'ethereum-mainnet', 'node', 'eth_chainId', date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', $2, 1
     FROM api_keys WHERE project_id = $1 LIMIT 1
     ON CONFLICT (project_id, day, key_id, subscription_id, network, api, endpoint, status) DO UPDATE SET cu = EXCLUDED.cu`,
    [projectId, cu],
  );
}

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

  await page.getByRole("link", { name: "Usage", exact: true }).click();
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
  await page.getByRole("link", { name: "Overview", exact: true }).click();
  await expect(page.getByTestId("sparkline-total")).toContainText(String(CU));
});

test("past 100 % the allowance bar shows the real share and the banner follows live: refused on the free plan, overage on a paid plan", async ({ page }) => {
  test.setTimeout(120_000);
  await signUp(page, uniqueEmail("allowance"));
  const projectId = await completeOnboarding(page);

  // 85 % of the free plan's day: the banner warns that calls will be refused at 100 %.
  await setUsedToday(projectId, 850_000);
  await page.goto(`/projects/${projectId}/usage`);
  const banner = page.getByTestId("allowance-banner");
  await expect(banner).toContainText("This project used 85 % of today's allowance");
  await expect(banner).toContainText("At 100 % calls are refused with 429 EXCEEDED_QUOTA_LIMIT.");
  await expect(page.getByTestId("allowance-text")).toContainText("850,000 of 1,000,000 CU used (85.0 %)");

  // Past 100 % while the page is open: the bar and the banner both follow, without a reload.
  await setUsedToday(projectId, 1_050_468);
  await expect(page.getByTestId("allowance-text")).toContainText("1,050,468 of 1,000,000 CU used (105.0 %)", { timeout: 20_000 });
  await expect(page.getByTestId("allowance-state")).toContainText("calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets at");
  await expect(banner).toContainText("This project used all of today's allowance", { timeout: 20_000 });
  await expect(banner).toContainText("Calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets.");

  // A paid plan (100 million CU a month) with overage on, 5 % past it: served and metered as overage.
  await sql(`UPDATE projects SET plan = 'STARTER_PLUS', overage = true WHERE id = $1`, [projectId]);
  await setUsedToday(projectId, 105_000_000);
  await page.reload();
  await expect(page.getByTestId("allowance-text")).toContainText("105,000,000 of 100,000,000 CU used (105.0 %)");
  await expect(page.getByTestId("allowance-state")).toContainText("Overage is on: the 5,000,000 CU past the allowance are overage, served and metered");
  await expect(banner).toContainText("This project used 105 % of this month's allowance");
  await expect(banner).toContainText("Overage is on: calls past the allowance are still served, and metered as overage.");
  await expect(banner).not.toContainText("refused");
});

test("the latency of a step without neighbours shows as dots, and the latency axis labels stay on one line", async ({ page }) => {
  test.setTimeout(120_000);
  await signUp(page, uniqueEmail("latency"));
  const projectId = await completeOnboarding(page);

  // Three requests of 100–250 ms in one hour, three hours ago; no requests in the hours around it.
  await sql(
    `INSERT INTO usage_hours (project_id, key_id, network, api, endpoint, hour, cu, requests, latency_ms_sum, latency_hist)
     SELECT $1, id, 'ethereum-mainnet', 'node', 'eth_chainId', date_trunc('hour', now()) - interval '3 hours', 15, 3, 600, '{0,0,0,0,0,3,0,0,0,0,0}'
     FROM api_keys WHERE project_id = $1 LIMIT 1`,
    [projectId],
  );
  await page.goto(`/projects/${projectId}/usage`);
  await page.getByLabel("Time range").selectOption("24h");
  const latency = page.getByRole("region", { name: "Latency" });
  await expect(latency.locator(".recharts-line")).toHaveCount(3);
  // One dot per percentile (p50, p95, p99) at the step, none elsewhere.
  await expect(latency.locator("circle.recharts-line-dot")).toHaveCount(3);
  for (const dot of await latency.locator("circle.recharts-line-dot").all()) {
    const box = await dot.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(3);
  }
  // The Y axis's labels ("240 ms"), each one line of text.
  const ticks = latency.locator("text.recharts-cartesian-axis-tick-value").filter({ hasText: /ms$/ });
  await expect(ticks.first()).toBeVisible();
  expect(await ticks.count()).toBeGreaterThanOrEqual(2);
  for (const tick of await ticks.all()) await expect(tick.locator("tspan")).toHaveCount(1);
});
