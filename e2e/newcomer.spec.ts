import { callNode, completeOnboarding, expect, signIn, signUp, test, uniqueEmail } from "./fixtures";

test("a newcomer signs up, onboards, reveals, copies and resets the key, signs out and back in", async ({ page, context, baseURL }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const email = uniqueEmail("newcomer");
  await signUp(page, email);
  const projectId = await completeOnboarding(page);

  // Overview: the project, its plan and the key, masked until revealed.
  await expect(page.getByRole("heading", { name: "My First Project" })).toBeVisible();
  await expect(page.getByText("Starter (free)").first()).toBeVisible();
  await expect(page.getByTestId("api-key-value")).toHaveCount(0);
  await page.getByRole("button", { name: "Reveal" }).first().click();
  const keyValue = page.getByTestId("api-key-value").first();
  await expect(keyValue).toHaveText(/^bg_[1-9A-HJ-NP-Za-km-z]{30,36}$/);
  const key = (await keyValue.textContent())!.trim();

  // Endpoints of the catalog are listed with the devnet badge.
  await expect(page.getByText(`${baseURL}/node/ethereum-mainnet`, { exact: false }).first()).toBeVisible();
  await expect(page.getByText(`${baseURL}/rpc/babylon-mainnet`, { exact: false }).first()).toBeVisible();
  await expect(page.getByText(/devnet/i).first()).toBeVisible();

  await page.getByRole("button", { name: "Copy" }).first().click();
  await expect(page.getByText("Copied").first()).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

  // The key works against the public API.
  const ok = await callNode(baseURL!, key);
  expect(ok.status).toBe(200);
  expect(ok.body.result).toMatch(/^0x[0-9a-f]+$/);

  // Reset on the Keys page: the old key is refused at once, the new one works.
  await page.getByRole("link", { name: "Keys", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/keys$`));
  await page.getByRole("button", { name: "Reset key" }).first().click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Reset key" }).click();
  const fresh = page.getByTestId("api-key-value").first();
  await expect(fresh).toHaveText(/^bg_/);
  const newKey = (await fresh.textContent())!.trim();
  expect(newKey).not.toBe(key);
  const refused = await callNode(baseURL!, key);
  expect(refused.status).toBe(401);
  expect(refused.body.code).toBe("AUTHENTICATION_FAILED");
  expect((await callNode(baseURL!, newKey)).status).toBe(200);

  // Sign out and back in: the same project, the new key.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  await signIn(page, email);
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}$`));
  await page.getByRole("button", { name: "Reveal" }).first().click();
  await expect(page.getByTestId("api-key-value").first()).toHaveText(newKey);
});
