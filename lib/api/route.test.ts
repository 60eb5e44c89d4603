import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as onboard } from "@/app/api/onboarding/route";
import { PATCH as renameProject } from "@/app/api/projects/[projectId]/route";
import { POST as createProject } from "@/app/api/projects/route";
import { POST as signUp } from "@/app/api/sign-up/route";
import { withErrors } from "@/lib/api/route";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { db, disconnectDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { connectTestDatabase, uniqueEmail } from "@/lib/testing/harness";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const body = () => JSON.stringify({ email: uniqueEmail("csrf"), password: "a long enough password" });

function post(path: string, headers: Record<string, string>, content: BodyInit | null = body()): Request {
  return new Request(`http://127.0.0.1:3000${path}`, {
    method: "POST",
    headers: { [CLIENT_IP_HEADER]: `192.0.2.${Math.floor(Math.random() * 250)}`, ...headers },
    body: content,
  });
}

async function answer(res: Response): Promise<{ status: number; body: unknown }> {
  return { status: res.status, body: await res.json() };
}

const crossSite = {
  status: 403,
  body: { code: "PERMISSION_DENIED", message: expect.stringMatching(/^Cross-site request refused: the console API accepts changes only from pages of http/) },
};
const notJson = {
  status: 400,
  body: { code: "INVALID_PARAMETER", message: "Send the request body as JSON, with the header Content-Type: application/json." },
};
const params = { params: Promise.resolve({}) };

describe("state-changing console API requests", () => {
  it("are taken from the configured origin, from the request's own host, and from clients that send no Origin", async () => {
    const publicOrigin = new URL(getEnv().PUBLIC_URL).origin;
    const json = { "Content-Type": "application/json; charset=utf-8" };
    expect((await signUp(post("/api/sign-up", { ...json, Origin: publicOrigin }))).status).toBe(201);
    expect((await signUp(post("/api/sign-up", { ...json, Origin: "http://console.test:8080", Host: "console.test:8080" }))).status).toBe(201);
    expect((await signUp(post("/api/sign-up", { ...json, "Sec-Fetch-Site": "same-origin" }))).status).toBe(201);
    expect((await signUp(post("/api/sign-up", json))).status).toBe(201);
  });

  it("are refused with 403 from another origin, before the session is looked at and before anything is written", async () => {
    const email = uniqueEmail("evil");
    const json = { "Content-Type": "application/json" };
    const content = JSON.stringify({ email, password: "a long enough password" });
    expect(await answer(await signUp(post("/api/sign-up", { ...json, Origin: "https://evil.example" }, content)))).toEqual(crossSite);
    expect(await answer(await signUp(post("/api/sign-up", { ...json, Origin: "null" }, content)))).toEqual(crossSite);
    // Same host name, another port: another origin.
    expect(await answer(await signUp(post("/api/sign-up", { ...json, Origin: "http://console.test:9999", Host: "console.test:8080" }, content)))).toEqual(crossSite);
    expect(await answer(await signUp(post("/api/sign-up", { ...json, "Sec-Fetch-Site": "cross-site" }, content)))).toEqual(crossSite);
    expect(await answer(await signUp(post("/api/sign-up", { ...json, "Sec-Fetch-Site": "same-site" }, content)))).toEqual(crossSite);
    expect(await db().user.count({ where: { email } })).toBe(0);
    // Routes behind a session refuse first (no session here: otherwise 401).
    expect(await answer(await createProject(post("/api/projects", { ...json, Origin: "https://evil.example" }, '{"name":"x"}'), params))).toEqual(crossSite);
    expect(await answer(await onboard(post("/api/onboarding", { ...json, Origin: "https://evil.example" }, "{}"), params))).toEqual(crossSite);
    const patch = new Request("http://127.0.0.1:3000/api/projects/prj_x", { method: "PATCH", headers: { ...json, Origin: "https://evil.example" }, body: "{}" });
    expect(await answer(await renameProject(patch, { params: Promise.resolve({ projectId: "prj_x" }) }))).toEqual(crossSite);
  });

  it("with a body refuse anything but JSON, as a cross-site form or text/plain request would send", async () => {
    const email = uniqueEmail("plain");
    const content = JSON.stringify({ email, password: "a long enough password" });
    // A string body gets Content-Type: text/plain;charset=UTF-8, as from a cross-site <form enctype="text/plain">.
    expect(await answer(await signUp(post("/api/sign-up", {}, content)))).toEqual(notJson);
    expect(await answer(await signUp(post("/api/sign-up", { "Content-Type": "application/x-www-form-urlencoded" }, `email=${email}`)))).toEqual(notJson);
    expect(await answer(await signUp(post("/api/sign-up", { "Content-Type": "multipart/form-data; boundary=x" }, content)))).toEqual(notJson);
    expect(await answer(await createProject(post("/api/projects", { "Content-Type": "text/plain" }, '{"name":"x"}'), params))).toEqual(notJson);
    expect(await db().user.count({ where: { email } })).toBe(0);
  });

  it("without a body need no Content-Type, and reads are not checked", async () => {
    // Past the checks: the body's reader explains what is missing.
    const res = await signUp(post("/api/sign-up", {}, null));
    expect(await answer(res)).toEqual({ status: 400, body: { code: "INVALID_PARAMETER", message: "The request body is empty: send a JSON object with Content-Type: application/json." } });
    const read = withErrors(async (req) => Response.json({ method: req.method }));
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      const res = await read(new Request("http://127.0.0.1:3000/api/x", { method, headers: { Origin: "https://evil.example", "Content-Type": "text/plain" } }));
      expect(res.status).toBe(200);
    }
  });
});

describe("console request bodies", () => {
  const json = { "Content-Type": "application/json" };

  it("are refused with 400 naming the field when they hold text PostgreSQL cannot store, and nothing is written", async () => {
    const email = uniqueEmail("text");
    const cases: Array<[string, string]> = [
      // Accepted before: the password was hashed with U+FFFD in place of the lone surrogate.
      [`{"email":"${email}","password":"a long enough \\ud800"}`, "password: must not contain an unpaired surrogate (\\ud800)."],
      [`{"email":"${email}\\u0000","password":"a long enough password"}`, "email: must not contain the NUL character (U+0000)."],
      [`{"email":"${email}","password":"a long enough password","\\u0000":1}`, 'The request body: the key "\\u0000" must not contain the NUL character (U+0000).'],
    ];
    for (const [content, message] of cases) {
      expect(await answer(await signUp(post("/api/sign-up", json, content)))).toEqual({ status: 400, body: { code: "INVALID_PARAMETER", message } });
    }
    // Bytes that are not UTF-8 were read as U+FFFD, and the user created with that password.
    const latin1 = Buffer.from(`{"email":"${email}","password":"a long enough pass\xe9"}`, "latin1");
    expect(await answer(await signUp(post("/api/sign-up", json, new Uint8Array(latin1))))).toEqual({
      status: 400,
      body: { code: "INVALID_PARAMETER", message: `The request body is not valid UTF-8 (byte offset ${latin1.indexOf(0xe9)}).` },
    });
    expect(await db().user.count({ where: { email } })).toBe(0);
  });
});
