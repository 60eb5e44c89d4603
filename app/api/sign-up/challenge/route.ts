import { withErrors } from "@/lib/api/route";
import { signUpChallenge } from "@/lib/auth/throttle";

/** The proof of work POST /api/sign-up needs now: `{ challenge, difficulty, expiresAt }` (difficulty 0 and nulls: none). */
export const GET = withErrors(async () => Response.json(await signUpChallenge(), { headers: { "Cache-Control": "no-store" } }));
