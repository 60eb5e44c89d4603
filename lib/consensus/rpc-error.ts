/** A JSON-RPC error of the consensus endpoints (answered with HTTP 200, as CometBFT does). */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: -32700 | -32600 | -32601 | -32602 | -32603,
    message: string,
    readonly data: string = message,
  ) {
    super(message);
  }
}

export const invalidParams = (detail: string) => new RpcError(-32602, `Invalid params: ${detail}`, detail);
export const handlerError = (detail: string) => new RpcError(-32603, detail, detail);
