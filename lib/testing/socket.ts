/**
 * For tests: a raw client of the native CometBFT WebSocket (JSON-RPC 2.0) that keeps every message
 * in order, and how the server closed the connection; and what a refused upgrade answered.
 */
import WebSocket from "ws";

export interface SocketMessage {
  id?: unknown;
  result?: { query?: string; data?: { type: string; value: Record<string, unknown> }; events?: Record<string, string[]> };
  error?: { code: number; message: string; data?: string };
}

export async function connectSocket(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const messages: SocketMessage[] = [];
  ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString()) as SocketMessage));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const until = async (what: string, check: () => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  /** The answer to a request (events carry the subscribe request's id too, with a query). */
  const answer = (id: unknown) => messages.find((m) => m.id === id && (m.error !== undefined || m.result?.query === undefined));
  const call = async (id: number | string, method: string, params: Record<string, unknown> = {}) => {
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    await until(`the answer to ${method}`, () => answer(id) !== undefined);
    return answer(id)!;
  };
  /** The events delivered to the subscription made with `id`. */
  const events = (id: unknown) => messages.filter((m) => m.id === id && m.result?.query !== undefined);
  return { ws, messages, closed, until, answer, call, events };
}

export type SocketClient = Awaited<ReturnType<typeof connectSocket>>;

/** The status and body of a refused upgrade (rejects if the upgrade is accepted). */
export function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { code: string; message: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => {
      ws.close();
      reject(new Error("the upgrade was accepted"));
    });
    ws.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { code: string; message: string } }));
    });
    ws.once("error", () => undefined);
  });
}
