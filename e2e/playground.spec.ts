import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Page } from "@playwright/test";
import { CONSENSUS_ENDPOINTS, CONSENSUS_METHODS, type ConsensusMethod } from "../lib/consensus/catalog";
import { completeOnboarding, expect, newProjectWithExamples, playgroundResponse, signUp, test, uniqueEmail } from "./fixtures";

const NETWORK = "babylon-mainnet";

interface Examples {
  latestHeight: number | null;
  txHash: string | null;
  sender: string | null;
  query: string | null;
}

/** A key each endpoint's result must have, and whether its form needs the example filled in. */
const EXPECTED: Record<ConsensusMethod, { resultKey: string; example: boolean }> = {
  block: { resultKey: "block_id", example: true },
  block_search: { resultKey: "total_count", example: true },
  status: { resultKey: "sync_info", example: false },
  tx_search: { resultKey: "txs", example: true },
  tx: { resultKey: "tx_result", example: true },
  consensus_params: { resultKey: "consensus_params", example: true },
  net_info: { resultKey: "n_peers", example: false },
};

/** Signs up, and waits until the devnet has blocks and a transaction to use as examples. */
function newProjectWithChainData(page: Page, tag: string) {
  return newProjectWithExamples<Examples>(page, {
    tag,
    network: NETWORK,
    ready: (examples) => examples.txHash !== null && examples.query !== null,
    message: "the devnet should produce blocks with transactions",
    timeout: 120_000,
  });
}

/** Waits for the answer to this method (the path shown changes with every request). */
async function expectAnswerTo(page: Page, method: ConsensusMethod) {
  await expect(playgroundResponse(page).path).toHaveText(new RegExp(`^GET /rpc/${NETWORK}/${method}(\\?|$)`));
}

test("the playground runs every consensus endpoint, with examples from the devnet, and copies a working curl", async ({ page, context, baseURL }) => {
  test.setTimeout(240_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const { projectId } = await newProjectWithChainData(page, "playground");

  await page.getByRole("link", { name: "Playground", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/playground`));
  await expect(page.getByRole("tab", { name: "Consensus (CometBFT RPC)" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByRole("tab", { name: /EVM JSON-RPC/ })).toHaveAttribute("aria-selected", "false");

  await page.getByLabel("Network", { exact: true }).selectOption(NETWORK);
  await expect(page.getByTestId("network-source")).toContainText("Devnet");
  await expect(page.getByTestId("examples")).toContainText("Latest height");

  const r = playgroundResponse(page);
  const send = page.getByRole("button", { name: "Send", exact: true });
  for (const method of CONSENSUS_METHODS) {
    const spec = CONSENSUS_ENDPOINTS[method];
    await page.getByRole("radio", { name: spec.title, exact: true }).check();
    await expect(page.getByRole("group", { name: `Parameters of ${method}` })).toBeVisible();
    if (EXPECTED[method].example) await page.getByRole("button", { name: "Use example" }).click();
    await expect(send).toBeEnabled();
    await send.click();
    await expectAnswerTo(page, method);
    await expect(r.status).toContainText("200");
    await expect(r.cu).toHaveText(`${spec.cu} CU`);
    await expect(page.getByTestId("response-error")).toHaveCount(0);
    await expect(r.tree.getByRole("button", { name: /^"result"/ })).toHaveAttribute("aria-expanded", "true");
    await expect(r.tree).toContainText(`"${EXPECTED[method].resultKey}":`);
  }

  // tx answered the example transaction (the devnet moves on, so the example may be newer than the first one seen).
  await page.getByRole("radio", { name: "Transaction", exact: true }).check();
  const hash = await page.getByRole("textbox", { name: "hash", exact: true }).inputValue();
  expect(hash).toMatch(/^[0-9A-F]{64}$/);
  await page.getByRole("button", { name: "Send", exact: true }).click();
  await expectAnswerTo(page, "tx");
  await expect(r.tree).toContainText(`"hash": "${hash}"`);

  // The tree is driven by the keyboard: each node is a button with aria-expanded.
  const tags = r.tree.getByRole("button", { name: /^"tags"/ });
  const firstTag = r.tree.getByRole("button", { name: /^0: \{/ });
  await expect(tags).toHaveAttribute("aria-expanded", "false");
  await expect(firstTag).toHaveCount(0);
  await tags.focus();
  await page.keyboard.press("Enter");
  await expect(tags).toHaveAttribute("aria-expanded", "true");
  await expect(firstTag).toBeVisible();
  await page.keyboard.press("Space");
  await expect(tags).toHaveAttribute("aria-expanded", "false");

  // Raw JSON, and back.
  await page.getByRole("button", { name: "Raw JSON" }).click();
  await expect(page.getByTestId("response-raw")).toContainText('"jsonrpc": "2.0"');
  await page.getByRole("button", { name: "Tree" }).click();
  await expect(r.tree).toBeVisible();

  // Copy as curl copies the full key; the command runs as copied.
  await expect(page.getByTestId("curl-command")).toContainText(`curl -s '${baseURL}/rpc/${NETWORK}/tx?hash=${hash}'`);
  // Beside /rpc: the URL for CometBFT tools (key in the path), and which to use.
  await expect(page.getByTestId("cometbft-url")).toContainText(`${baseURL}/cometbft/${NETWORK}/bg_`);
  await expect(page.getByTestId("cometbft-url-note")).toHaveText("/rpc is the documented API; /cometbft is the URL for CometBFT tools (cosmjs, explorers, relayers)");
  await page.getByRole("button", { name: "Copy as curl" }).click();
  await expect(page.getByText("Copied").first()).toBeVisible();
  const command = await page.evaluate(() => navigator.clipboard.readText());
  const m = /^curl -s '([^']+)' -H 'X-API-KEY: (bg_[1-9A-HJ-NP-Za-km-z]+)'$/.exec(command);
  expect(m, command).not.toBeNull();
  expect(m![1]).toBe(`${baseURL}/rpc/${NETWORK}/tx?hash=${hash}`);
  const output = existsSync("/usr/bin/curl")
    ? execFileSync("sh", ["-c", command], { encoding: "utf8" })
    : await (await fetch(m![1]!, { headers: { "X-API-KEY": m![2]! } })).text();
  const body = JSON.parse(output) as { result?: { hash?: string } };
  expect(body.result?.hash).toBe(hash);

  // The choice is kept in the address, so the page can be shared or reloaded.
  await expect(page).toHaveURL(/[?&]method=tx(&|$)/);
  await page.reload();
  await expect(page.getByRole("radio", { name: "Transaction", exact: true })).toBeChecked();
});

test("a bad query shows the parser's message at its offset and cannot be sent; error answers cost 0 CU", async ({ page }) => {
  test.setTimeout(180_000);
  const { projectId, examples } = await newProjectWithChainData(page, "playground-query");
  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=tx_search`);

  const query = page.getByRole("textbox", { name: "query", exact: true });
  const send = page.getByRole("button", { name: "Send", exact: true });
  await expect(send).toBeDisabled();
  await expect(page.getByTestId("send-note")).toHaveText("Enter query to send.");

  await query.fill("tx.height >");
  await expect(page.getByTestId("param-error-query")).toHaveText(/^parse error at offset 11: expected a number, TIME or DATE after '>'/);
  await expect(query).toHaveAttribute("aria-invalid", "true");
  const caret = page.getByTestId("query-caret");
  await expect(caret).toHaveAttribute("data-offset", "11");
  await expect(caret).toContainText("^ offset 11");
  await expect(send).toBeDisabled();
  await expect(page.getByTestId("send-note")).toHaveText("Fix query to send.");
  await expect(page.getByTestId("curl-command")).toHaveText("Fill in the parameters to get a command.");

  // "Go to offset" puts the cursor where the parser stopped; finishing the condition fixes it.
  await page.getByRole("button", { name: "Go to offset 11" }).click();
  await expect(query).toBeFocused();
  expect(await query.evaluate((el) => (el as HTMLInputElement).selectionStart)).toBe(11);
  await page.keyboard.type(" 1");
  await expect(query).toHaveValue("tx.height > 1");
  await expect(caret).toHaveCount(0);
  await expect(send).toBeEnabled();

  // An error in the middle is marked where it is.
  await query.fill("tx.height = 5 OR tx.height = 6");
  await expect(caret).toHaveAttribute("data-offset", "14");
  await expect(page.getByTestId("param-error-query")).toContainText("OR is not supported");

  // A JSON-RPC error answer is shown as an error, and is free.
  await page.getByRole("radio", { name: "Block", exact: true }).check();
  await page.getByRole("textbox", { name: "height", exact: true }).fill(String(examples.latestHeight! + 1_000_000));
  await send.click();
  await expectAnswerTo(page, "block");
  const error = page.getByTestId("response-error");
  await expect(error).toContainText("JSON-RPC error");
  await expect(error).toContainText("-32");
  await expect(playgroundResponse(page).status).toContainText("200");
  await expect(playgroundResponse(page).cu).toHaveText("0 CU");

  // Out-of-range numbers are refused before sending.
  await page.getByRole("radio", { name: "Block search", exact: true }).check();
  await page.getByRole("button", { name: "Use example" }).click();
  await page.getByRole("textbox", { name: "per_page", exact: true }).fill("101");
  await expect(page.getByTestId("param-error-per_page")).toHaveText("per_page is at most 100.");
  await expect(send).toBeDisabled();
});

test("before the devnet has blocks the playground says so; the examples API checks its caller and network", async ({ page, request }) => {
  await signUp(page, uniqueEmail("playground-empty"));
  const projectId = await completeOnboarding(page);
  const examplesUrl = (network: string) => `/api/projects/${projectId}/playground/examples?network=${network}`;

  await page.route("**/playground/examples?**", (route) => route.fulfill({ json: { latestHeight: null, txHash: null, sender: null, query: null } }));
  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=block`);
  await expect(page.getByTestId("examples-empty")).toContainText("The devnet has not produced blocks yet");
  await expect(page.getByRole("button", { name: "Use example" })).toHaveCount(0);
  await page.unroute("**/playground/examples?**");

  const ok = await page.request.get(examplesUrl("babylon-testnet"));
  expect(ok.status()).toBe(200);
  expect(Object.keys((await ok.json()) as object).sort()).toEqual(["latestHeight", "query", "sender", "txHash"]);
  const unknown = await page.request.get(examplesUrl("bitcoin-mainnet"));
  expect(unknown.status()).toBe(404);
  expect(await unknown.json()).toEqual({ code: "NOT_SUPPORTED_CHAIN", message: expect.any(String) });
  expect((await page.request.get(`/api/projects/${projectId}/playground/examples`)).status()).toBe(400);
  expect((await page.request.get(`/api/projects/prj_unknown1/playground/examples?network=${NETWORK}`)).status()).toBe(404);
  const anonymous = await request.get(examplesUrl(NETWORK));
  expect(anonymous.status()).toBe(401);
});
