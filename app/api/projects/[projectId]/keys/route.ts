import { withUser } from "@/lib/api/route";
import { listKeys } from "@/lib/keys/service";

type P = { projectId: string };

/** The project's keys. They are created from the Keys page's form, through its server action (components/keys/actions.ts). */
export const GET = withUser<P>(async (_req, { user, params }) => Response.json({ items: await listKeys(user.id, params.projectId) }));
