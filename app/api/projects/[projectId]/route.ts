import { parseBody, withUser } from "@/lib/api/route";
import { renameProjectSchema } from "@/lib/projects/schema";
import { getProjectForUser, renameProject } from "@/lib/projects/service";

type P = { projectId: string };

export const GET = withUser<P>(async (_req, { user, params }) => Response.json(await getProjectForUser(user.id, params.projectId)));

export const PATCH = withUser<P>(async (req, { user, params }) => {
  const { name } = await parseBody(req, renameProjectSchema);
  await renameProject(user.id, params.projectId, name);
  return Response.json({ result: true });
});
