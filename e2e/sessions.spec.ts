import type { Browser, BrowserContext, Cookie } from "@playwright/test";
import { completeOnboarding, expect, PASSWORD, signIn, signUp, test, uniqueEmail } from "./fixtures";

/** A browser context holding only a copy of saved cookies: someone who kept the session cookie. */
async function withSavedCookies<T>(browser: Browser, baseURL: string, cookies: Cookie[], check: (context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ baseURL, storageState: { cookies, origins: [] } });
  try {
    return await check(context);
  } finally {
    await context.close();
  }
}

/** What the console API answers a context's cookie: the status of GET /api/projects. */
async function apiStatus(context: BrowserContext): Promise<number> {
  return (await context.request.get("/api/projects")).status();
}

test("a session cookie saved before signing out is refused afterwards: 401 from the console API, sign-in from pages", async ({ page, browser, baseURL }) => {
  await signUp(page, uniqueEmail("signout"));
  const projectId = await completeOnboarding(page, "Saved Cookie");
  const saved = await page.context().cookies();
  expect(saved.some((c) => c.name === "next-auth.session-token" && c.httpOnly)).toBe(true);
  await withSavedCookies(browser, baseURL!, saved, async (copy) => expect(await apiStatus(copy)).toBe(200));

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/sign-in$/);

  await withSavedCookies(browser, baseURL!, saved, async (copy) => {
    const res = await copy.request.get("/api/projects");
    expect(res.status()).toBe(401);
    expect(await res.json()).toEqual({ code: "NO_AUTHENTICATION_FOUND", message: "Sign in to continue." });
    expect(await (await copy.request.get("/api/auth/session")).json()).toEqual({});
    const tab = await copy.newPage();
    await tab.goto(`/projects/${projectId}/settings`);
    await expect(tab).toHaveURL(/\/sign-in$/);
    await expect(tab.getByRole("heading", { name: "Sign in to Blockgate" })).toBeVisible();
  });
});

test("Settings › Account: changing the password signs out the other sessions and keeps this one; signing out everywhere ends them all", async ({ page, browser, baseURL }) => {
  test.setTimeout(90_000);
  const email = uniqueEmail("account");
  await signUp(page, email);
  const projectId = await completeOnboarding(page, "Account Owner");
  // The same account signed in on another device.
  const other = await browser.newContext({ baseURL });
  await signIn(await other.newPage(), email);
  await expect.poll(() => apiStatus(other)).toBe(200);

  // Reached from the email address in the sidebar.
  await page.getByRole("link", { name: `Your account, signed in as ${email}` }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/settings#account$`));
  const account = page.getByRole("region", { name: "Account", exact: true });
  await expect(account.getByRole("heading", { name: "Change password" })).toBeVisible();

  // Keyboard only: each field by its label, Tab between them, Enter submits.
  const current = account.getByLabel("Current password");
  const fresh = account.getByLabel("New password", { exact: true });
  const confirm = account.getByLabel("Confirm new password");
  await current.focus();
  await page.keyboard.type("not my password");
  await page.keyboard.press("Tab");
  await expect(fresh).toBeFocused();
  await page.keyboard.type("a brand new password");
  await page.keyboard.press("Tab");
  await expect(confirm).toBeFocused();
  await page.keyboard.type("a brand new passwort");
  await page.keyboard.press("Enter");
  await expect(account.getByText("The two new passwords differ")).toBeVisible();
  await expect(confirm).toHaveAttribute("aria-invalid", "true");

  await confirm.fill("a brand new password");
  await page.keyboard.press("Enter");
  await expect(account.getByText("That is not your current password.")).toBeVisible();
  await expect(current).toBeFocused();
  await expect(current).toHaveAttribute("aria-invalid", "true");
  expect(await apiStatus(other)).toBe(200);

  await current.fill(PASSWORD);
  await page.keyboard.press("Enter");
  await expect(account.getByRole("status").filter({ hasText: "Password changed." })).toContainText("Your other sessions are signed out; this one stays signed in.");
  await expect(current).toHaveValue("");
  expect(await apiStatus(other)).toBe(401);
  expect(await apiStatus(page.context())).toBe(200);

  // The other device signs in again with the new password; then this one signs out everywhere.
  const otherPage = await other.newPage();
  await signIn(otherPage, email, "a brand new password");
  await expect(otherPage).toHaveURL(new RegExp(`/projects/${projectId}$`));
  const saved = await page.context().cookies();

  await account.getByRole("button", { name: "Sign out everywhere" }).click();
  const dialog = page.getByRole("dialog", { name: "Sign out everywhere?" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  expect(await apiStatus(other)).toBe(200);

  await account.getByRole("button", { name: "Sign out everywhere" }).click();
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Sign out everywhere" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/sign-in$/);
  expect(await apiStatus(other)).toBe(401);
  await otherPage.reload();
  await expect(otherPage).toHaveURL(/\/sign-in$/);
  await withSavedCookies(browser, baseURL!, saved, async (copy) => expect(await apiStatus(copy)).toBe(401));
  await other.close();

  // Signing in again works.
  await signIn(page, email, "a brand new password");
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}$`));
});
