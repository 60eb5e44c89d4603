import { parseBody, withUser } from "@/lib/api/route";
import { createProjectSchema } from "@/lib/projects/schema";
import { createProject, listProjects } from "@/lib/projects/service";

export const GET = withUser(async (_req, { user }) => Response.json({ items: await listProjects(user.id) }));

export const POST = withUser(async (req, { user }) => {
  const { name } = await parseBody(req, createProjectSchema);
  const { projectId } = await createProject(user.id, name);
  return Response.json({ projectId }, { status: 201 });
});
