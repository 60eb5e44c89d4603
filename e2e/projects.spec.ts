import { callNode, completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

test("a user creates, renames and switches between projects, each with its own key", async ({ page, baseURL }) => {
  await signUp(page, uniqueEmail("projects"));
  const first = await completeOnboarding(page);

  await page.getByRole("link", { name: "Settings", exact: true }).click();
  await page.getByLabel("Project name", { exact: true }).fill("   ");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Enter a project name")).toBeVisible();
  await page.getByLabel("Project name", { exact: true }).fill("Mainnet indexer");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("combobox", { name: "Project" })).toContainText("Mainnet indexer");

  await page.getByLabel("New project name").fill("Staging");
  await page.getByRole("button", { name: "Create project" }).click();
  await expect(page).toHaveURL(/\/projects\/prj_[^/]+$/);
  const second = new URL(page.url()).pathname.split("/")[2]!;
  expect(second).not.toBe(first);
  await expect(page.getByRole("heading", { name: "Staging" })).toBeVisible();
  await page.getByRole("button", { name: "Reveal" }).first().click();
  const secondKey = (await page.getByTestId("api-key-value").first().textContent())!.trim();
  expect((await callNode(baseURL!, secondKey)).status).toBe(200);

  // Switch back with the project switcher.
  await page.getByRole("combobox", { name: "Project" }).selectOption({ label: "Mainnet indexer" });
  await expect(page).toHaveURL(new RegExp(`/projects/${first}$`));
  await expect(page.getByRole("heading", { name: "Mainnet indexer" })).toBeVisible();
  await page.getByRole("button", { name: "Reveal" }).first().click();
  await expect(page.getByTestId("api-key-value").first()).not.toHaveText(secondKey);
});

test("the health endpoints answer for load balancers", async ({ request }) => {
  const health = await request.get("/api/health");
  expect(health.status()).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });
  const ready = await request.get("/api/ready");
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toEqual({ status: "ready", limits: "local" });
});
