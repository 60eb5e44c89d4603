import { completeOnboarding, expect, PASSWORD, signIn, signUp, test, uniqueEmail } from "./fixtures";

test.describe("sign-up refuses bad input with clear messages", () => {
  test("malformed email and short password are shown on the form, nothing is sent", async ({ page }) => {
    await page.goto("/sign-up");
    await page.getByLabel("Email").fill("not-an-email");
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Sign up" }).click();
    await expect(page.getByText("Enter a valid email address", { exact: false })).toBeVisible();
    await expect(page.getByText("Use at least 10 characters")).toBeVisible();
    await expect(page).toHaveURL(/\/sign-up$/);
  });

  test("the API refuses the same input with 400 and writes nothing", async ({ request }) => {
    const email = uniqueEmail("bad");
    const cases = [
      { email: "not-an-email", password: PASSWORD },
      { email, password: "short" },
      { email, password: "x".repeat(500) },
      { email: `${"a".repeat(300)}@example.com`, password: PASSWORD },
      {},
    ];
    for (const body of cases) {
      const res = await request.post("/api/sign-up", { data: body });
      expect(res.status()).toBe(400);
      expect(await res.json()).toMatchObject({ code: "INVALID_PARAMETER" });
    }
    const garbage = await request.post("/api/sign-up", { data: "{{{", headers: { "Content-Type": "application/json" } });
    expect(garbage.status()).toBe(400);
    // Nothing was created: signing up now with the same email works.
    expect((await request.post("/api/sign-up", { data: { email, password: PASSWORD } })).status()).toBe(201);
  });

  test("an existing email is refused", async ({ page }) => {
    const email = uniqueEmail("dup");
    await signUp(page, email);
    await completeOnboarding(page);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    await signUp(page, email.toUpperCase());
    await expect(page.getByRole("alert").filter({ hasText: "already exists" })).toBeVisible();
    await expect(page).toHaveURL(/\/sign-up$/);
  });

  test("a wrong password is refused with a clear message", async ({ page }) => {
    const email = uniqueEmail("wrongpw");
    await signUp(page, email);
    await completeOnboarding(page);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    await signIn(page, email, "definitely wrong password");
    await expect(page.getByRole("alert").filter({ hasText: "Wrong email or password" })).toBeVisible();
    await expect(page).toHaveURL(/\/sign-in/);
  });
});

test("onboarding twice creates one project", async ({ page }) => {
  await signUp(page, uniqueEmail("twice"));
  const projectId = await completeOnboarding(page);
  // Visiting onboarding again leads back to the project.
  await page.goto("/onboarding");
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}$`));
  // Submitting again (double submit, replayed request) returns the same project.
  const again = await page.request.post("/api/onboarding", { data: { name: "Again", useCase: "wallet" } });
  expect(again.status()).toBe(200);
  expect(await again.json()).toEqual({ projectId, created: false });
  const list = await page.request.get("/api/projects");
  expect(((await list.json()) as { items: unknown[] }).items).toHaveLength(1);
});

test("a double-clicked onboarding submit creates one project", async ({ page }) => {
  await signUp(page, uniqueEmail("double"));
  await expect(page).toHaveURL(/\/onboarding$/);
  await page.getByLabel("Your name").fill("Quick Clicker");
  await page.getByLabel("What are you building?").selectOption({ index: 1 });
  await page.getByRole("button", { name: "Continue" }).dblclick();
  await expect(page).toHaveURL(/\/projects\/prj_[^/]+$/);
  const list = await page.request.get("/api/projects");
  expect(((await list.json()) as { items: unknown[] }).items).toHaveLength(1);
});
