import pino from "pino";
import { z } from "zod";
import type { Logger } from "@/lib/log";

const lineSchema = z.looseObject({ level: z.string(), msg: z.string() });
export type LogLine = z.infer<typeof lineSchema>;

/**
 * A real pino logger (debug level) keeping what it writes in memory, for tests that assert the
 * lines an operator would read: `lines` as parsed JSON, `messages` their texts (both live).
 */
export function captureLogs(): { logger: Logger; lines: LogLine[]; messages: string[] } {
  const lines: LogLine[] = [];
  const messages: string[] = [];
  const logger = pino(
    { level: "debug", base: {}, formatters: { level: (label) => ({ level: label }) } },
    {
      write(text: string) {
        const line = lineSchema.parse(JSON.parse(text));
        lines.push(line);
        messages.push(line.msg);
      },
    },
  );
  return { logger, lines, messages };
}
