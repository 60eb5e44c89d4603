import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Page } from "@playwright/test";
import { APTOS_ROUTES } from "../lib/aptos/catalog";
import { expect, newProjectWithExamples, playgroundResponse, test } from "./fixtures";

const NETWORK = "aptos-testnet";
const DEVNET_CHAIN_ID = 105;
const KEY = "bg_[1-9A-HJ-NP-Za-km-z]+";

interface Examples {
  blockHeight: string | null;
  ledgerVersion: string | null;
  transaction: { version: string; hash: string; sender: string | null } | null;
}

/** Signs up, and waits until the Aptos devnet has stored a user transaction to use as an example. */
function newProjectWithLedger(page: Page, tag: string) {
  return newProjectWithExamples<Examples>(page, {
    tag,
    network: NETWORK,
    ready: (examples) => examples.transaction?.sender != null,
    message: "the Aptos devnet should produce blocks with user transactions",
  });
}

/** The answer shown as raw JSON, then back to the tree. */
async function rawAnswer<T>(page: Page): Promise<T> {
  await page.getByRole("button", { name: "Raw JSON" }).click();
  const body = JSON.parse((await page.getByTestId("response-raw").textContent()) ?? "") as T;
  await page.getByRole("button", { name: "Tree" }).click();
  return body;
}

test("the overview lists the Aptos read URLs, and the playground reads the ledger and a transaction by version and by hash from the devnet", async ({ page, context, baseURL }) => {
  test.setTimeout(240_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const { projectId } = await newProjectWithLedger(page, "playground-aptos");

  // Overview: both URL forms per Aptos network; the key-in-path one copies the full key and answers.
  await page.goto(`/projects/${projectId}`);
  const item = page.locator(`li[data-network="${NETWORK}"]`);
  await expect(item).toContainText("Read API (header)");
  await expect(item).toContainText(`${baseURL}/aptos/testnet/v1`);
  await expect(page.locator('li[data-network="aptos-mainnet"]')).toContainText(`${baseURL}/aptos/mainnet/v1`);
  await item.getByRole("button", { name: "Copy Aptos Testnet read API URL with key" }).click();
  await expect(item.getByText("Copied")).toBeVisible();
  const keyed = await page.evaluate(() => navigator.clipboard.readText());
  expect(keyed).toMatch(new RegExp(`^${baseURL}/aptos/testnet/${KEY}/v1$`));
  const ledger = (await (await fetch(keyed)).json()) as { chain_id: number };
  expect(ledger.chain_id).toBe(DEVNET_CHAIN_ID);

  // Playground: the Aptos tab, its network and routes with their CU.
  await page.getByRole("link", { name: "Playground", exact: true }).click();
  const tab = page.getByRole("tab", { name: "Aptos (fullnode REST)" });
  await tab.click();
  await expect(tab).toHaveAttribute("aria-selected", "true");
  await page.getByLabel("Network", { exact: true }).selectOption(NETWORK);
  await expect(page.getByTestId("network-source")).toContainText(`Devnet · chain ID ${DEVNET_CHAIN_ID}`);
  await expect(page).toHaveURL(new RegExp(`[?&]network=${NETWORK}(&|$)`));
  for (const spec of Object.values(APTOS_ROUTES)) {
    await expect(page.getByRole("radio", { name: spec.title, exact: true })).toHaveAccessibleDescription(new RegExp(`^Method ${spec.route}, ${spec.cu} compute units per call\\.`));
  }
  await expect(page.getByTestId("aptos-examples")).toContainText("Latest block height");

  const r = playgroundResponse(page);
  const send = page.getByRole("button", { name: "Send", exact: true });

  // Ledger information: the first route, no parameters.
  await expect(page.getByRole("radio", { name: "Ledger information", exact: true })).toBeChecked();
  await expect(page.getByTestId("curl-command")).toHaveText(new RegExp(`^curl -s '${baseURL}/aptos/testnet/v1' -H 'X-API-KEY: bg_`));
  await send.click();
  await expect(r.path).toHaveText("GET /aptos/testnet/v1");
  await expect(r.status).toContainText("200");
  await expect(r.cu).toHaveText(`${APTOS_ROUTES.ledger_info.cu} CU`);
  await expect(r.error).toHaveCount(0);
  await expect(r.tree).toContainText(`"chain_id": ${DEVNET_CHAIN_ID}`);
  const info = await rawAnswer<{ ledger_version: string; block_height: string }>(page);
  expect(BigInt(info.ledger_version)).toBeGreaterThan(0n);

  // Transaction by version: filled with a recent user transaction's version.
  await page.getByRole("radio", { name: "Transaction by version", exact: true }).check();
  await expect(page).toHaveURL(/[?&]method=transaction_by_version(&|$)/);
  const versionField = page.getByRole("textbox", { name: "txn_version", exact: true });
  await expect(versionField).toHaveValue(/^\d+$/);
  const version = await versionField.inputValue();
  await send.click();
  await expect(r.path).toHaveText(`GET /aptos/testnet/v1/transactions/by_version/${version}`);
  await expect(r.status).toContainText("200");
  await expect(r.cu).toHaveText(`${APTOS_ROUTES.transaction_by_version.cu} CU`);
  await expect(r.error).toHaveCount(0);
  const byVersion = await rawAnswer<{ version: string; hash: string; type: string }>(page);
  expect(byVersion.version).toBe(version);
  expect(byVersion.type).toBe("user_transaction");

  // Transaction by hash: the same transaction.
  await page.getByRole("radio", { name: "Transaction by hash", exact: true }).check();
  const hashField = page.getByRole("textbox", { name: "txn_hash", exact: true });
  await hashField.fill(byVersion.hash);
  await send.click();
  await expect(r.path).toHaveText(`GET /aptos/testnet/v1/transactions/by_hash/${byVersion.hash}`);
  await expect(r.status).toContainText("200");
  await expect(r.cu).toHaveText(`${APTOS_ROUTES.transaction_by_hash.cu} CU`);
  await expect(r.tree).toContainText(`"hash": "${byVersion.hash}"`);
  expect((await rawAnswer<{ version: string }>(page)).version).toBe(version);

  // Copy as curl copies the full key; the command runs as copied.
  await page.getByRole("button", { name: "Copy as curl" }).click();
  await expect(page.getByText("Copied").first()).toBeVisible();
  const command = await page.evaluate(() => navigator.clipboard.readText());
  const m = new RegExp(`^curl -s '([^']+)' -H 'X-API-KEY: (${KEY})'$`).exec(command);
  expect(m, command).not.toBeNull();
  expect(m![1]).toBe(`${baseURL}/aptos/testnet/v1/transactions/by_hash/${byVersion.hash}`);
  const output = existsSync("/usr/bin/curl") ? execFileSync("sh", ["-c", command], { encoding: "utf8" }) : await (await fetch(m![1]!, { headers: { "X-API-KEY": m![2]! } })).text();
  expect((JSON.parse(output) as { version: string }).version).toBe(version);

  // A bad hash is refused before it is sent.
  await hashField.fill("0xabc");
  await expect(page.getByTestId("param-error-txn_hash")).toHaveText("Enter 64 hex digits, with or without 0x.");
  await expect(hashField).toHaveAttribute("aria-invalid", "true");
  await expect(send).toBeDisabled();
  await expect(page.getByTestId("send-note")).toHaveText("Fix txn_hash to send.");

  // A block with its transactions: the toggle adds the query parameter.
  await page.getByRole("radio", { name: "Block by height", exact: true }).check();
  await page.getByRole("textbox", { name: "block_height", exact: true }).fill(info.block_height);
  await page.getByRole("checkbox", { name: "with_transactions" }).check();
  await send.click();
  await expect(r.path).toHaveText(`GET /aptos/testnet/v1/blocks/by_height/${info.block_height}?with_transactions=true`);
  await expect(r.status).toContainText("200");
  const block = await rawAnswer<{ block_height: string; transactions: unknown[] }>(page);
  expect(block.block_height).toBe(info.block_height);
  expect(block.transactions.length).toBeGreaterThan(0);
});

test("a version past the ledger answers the read API's 404 and costs 0 CU", async ({ page, consoleErrors }) => {
  test.setTimeout(180_000);
  const { projectId } = await newProjectWithLedger(page, "playground-aptos-error");
  await page.goto(`/projects/${projectId}/playground?network=${NETWORK}&method=transaction_by_version`);
  await expect(page.getByRole("tab", { name: "Aptos (fullnode REST)" })).toHaveAttribute("aria-selected", "true");
  await expect(page.getByRole("radio", { name: "Transaction by version", exact: true })).toBeChecked();

  const field = page.getByRole("textbox", { name: "txn_version", exact: true });
  const send = page.getByRole("button", { name: "Send", exact: true });
  // Filled from the index once its values load; cleared, it must be entered.
  await expect(field).toHaveValue(/^\d+$/);
  await field.fill("");
  await expect(send).toBeDisabled();
  await expect(page.getByTestId("send-note")).toHaveText("Enter txn_version to send.");
  await field.fill("18446744073709551615");
  await send.click();
  const r = playgroundResponse(page);
  await expect(r.status).toContainText("404");
  await expect(r.error).toContainText("HTTP 404 · transaction_not_found");
  await expect(r.error).toContainText("Transaction not found by Ledger version(18446744073709551615)");
  await expect(r.cu).toHaveText("0 CU");
  // The browser logs every 4xx fetch as an error; this one was asked for, and is the only one.
  expect(consoleErrors).toEqual(["Failed to load resource: the server responded with a status of 404 (Not Found)"]);
  consoleErrors.length = 0;
});
