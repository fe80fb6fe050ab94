// Who is signed in, and what their role lets them do.

import { createContext, useContext } from "react";
import type { Me, Role } from "../api/types";

const RANK: Record<Role, number> = { viewer: 1, ci: 2, operator: 3, admin: 4 };

/** viewer < ci < operator < admin: does `role` include `needed`? */
export function allows(role: Role | null | undefined, needed: Role): boolean {
  return !!role && RANK[role] >= RANK[needed];
}

export interface Session {
  me: Me;
  logout: () => Promise<void>;
  can: (needed: Role) => boolean;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  // i18n-ignore: a programming error for developers, never shown in the UI
  if (!session) throw new Error("useSession outside SessionContext");
  return session;
}
