import { completeOnboarding, expect, signUp, test, uniqueEmail } from "./fixtures";

test("a second user cannot open the first user's project, which answers as if it did not exist", async ({ browser }) => {
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

  // The same 404 page as for a project id that does not exist.
  for (const id of [projectId, "prj_1111111111111111"]) {
    const response = await second.goto(`/projects/${id}`);
    expect(response?.status()).toBe(404);
    await expect(second.getByRole("heading", { name: "Page not found" })).toBeVisible();
    await expect(second.getByText("My First Project")).toHaveCount(0);
  }
  await second.goto(`/projects/${projectId}`);
  const html = await second.content();
  expect(html).not.toContain(key);
  expect(html).not.toContain(key.slice(0, 7));

  // The console API answers the same as for a project that does not exist, without data.
  for (const path of [`/api/projects/${projectId}`, `/api/projects/${projectId}/keys`]) {
    const res = await second.request.get(path);
    expect(res.status()).toBe(404);
    expect(await res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such project." });
  }
  const list = await second.request.get(`/api/projects/${projectId}/keys`);
  expect(await list.text()).not.toContain("bg_");
  const reveal = await second.request.post(`/api/projects/${projectId}/keys/key_x/reveal`);
  expect(reveal.status()).toBe(404);
  expect(await reveal.json()).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such project." });
  expect(errors).toEqual([]);
  await context.close();
});
