import { parseBody, withUser } from "@/lib/api/route";
import { onboardingSchema } from "@/lib/projects/schema";
import { completeOnboarding } from "@/lib/projects/service";

export const POST = withUser(async (req, { user }) => {
  const input = await parseBody(req, onboardingSchema);
  const result = await completeOnboarding(user.id, input);
  return Response.json(result, { status: result.created ? 201 : 200 });
});
