import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

test("a second user cannot open the first user's project", async ({ browser }) => {
  const first = await browser.newPage();
  await signUp(first, uniqueEmail("owner"));
  const projectId = await completeOnboarding(first, "Owner");
  await first.getByRole("button", { name: "Reveal" }).first().click();
  const key = (await first.getByTestId("api-key-value").first().textContent())!.trim();
  await first.close();

  const context = await browser.newContext();
  const second = await context.newPage();
  const errors: string[] = [];
  second.on("pageerror", (e) => errors.push(e.message));
  await signUp(second, uniqueEmail("intruder"));
  await completeOnboarding(second, "Intruder");

  const response = await second.goto(`/projects/${projectId}`);
  expect(response?.status()).toBe(403);
  await expect(second.getByText("You don't have access to this project")).toBeVisible();
  await expect(second.getByText("My First Project")).toHaveCount(0);
  const html = await second.content();
  expect(html).not.toContain(key);
  expect(html).not.toContain(key.slice(0, 7));

  // The console API refuses too, without data.
  for (const path of [`/api/projects/${projectId}`, `/api/projects/${projectId}/keys`]) {
    const res = await second.request.get(path);
    expect(res.status()).toBe(403);
    expect(await res.json()).toEqual({ code: "PERMISSION_DENIED", message: expect.any(String) });
  }
  const list = await second.request.get(`/api/projects/${projectId}/keys`);
  expect(await list.text()).not.toContain("bg_");
  const reveal = await second.request.post(`/api/projects/${projectId}/keys/key_x/reveal`);
  expect(reveal.status()).toBe(403);
  expect(errors).toEqual([]);
  await context.close();
});
