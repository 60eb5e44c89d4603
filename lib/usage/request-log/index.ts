/**
 * The request log: the last REQUEST_LOG_ROWS requests of each project, for the console's request
 * log and recent traffic. Three parts: what the gateway hands over is copied into a columnar ring
 * per project (ring.ts), a flush writes the rings' newest entries and sweeps older rows (store.ts),
 * and what is written is cut and masked (mask.ts).
 */
export { EXCERPT_CHARS, MASK, maskExcerpt, maskRequestLine } from "./mask";
export { REQUEST_LOG_ROWS, Ring, type RequestLogColumns, type RequestLogEntry } from "./ring";
export { RequestLog } from "./store";
