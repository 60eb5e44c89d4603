import { describe, expect, it } from "vitest";
import { createKeySchema } from "@/lib/keys/schema";
import { createProjectSchema, onboardingSchema, renameProjectSchema } from "./schema";

const message = (r: { success: boolean; error?: { issues: Array<{ message: string }> } }) => (r.success ? null : r.error!.issues[0]!.message);

describe("names people type", () => {
  it("refuse control characters (a NUL could not be stored) with a clear message", () => {
    for (const bad of ["a\u0000b", "tab\there", "line\nbreak", "bell\u0007", "del\u007f"]) {
      expect(message(createProjectSchema.safeParse({ name: bad })), bad).toBe("Control characters are not allowed");
      expect(message(renameProjectSchema.safeParse({ name: bad })), bad).toBe("Control characters are not allowed");
      expect(message(createKeySchema.safeParse({ name: bad })), bad).toBe("Control characters are not allowed");
      expect(message(onboardingSchema.safeParse({ name: bad, useCase: "wallet" })), bad).toBe("Control characters are not allowed");
      expect(message(onboardingSchema.safeParse({ name: "Ada", organization: bad, useCase: "wallet" })), bad).toBe("Control characters are not allowed");
    }
  });

  it("accept ordinary names, trimmed, in any script", () => {
    expect(createProjectSchema.parse({ name: "  My dApp — 主网  " })).toEqual({ name: "My dApp — 主网" });
    expect(createKeySchema.parse({ name: "CI key 🔑" })).toEqual({ name: "CI key 🔑" });
    expect(onboardingSchema.parse({ name: "Ada", organization: "", useCase: "defi" })).toEqual({ name: "Ada", organization: "", useCase: "defi" });
    expect(onboardingSchema.parse({ name: "Ada", useCase: "defi" })).toEqual({ name: "Ada", useCase: "defi" });
  });
});
