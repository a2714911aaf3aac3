import { createContext, useContext } from 'react';
import type { Me, Org } from './api/admin-types';

/** Who is signed in and which organisation the pages show. */
export interface Session {
  me: Me;
  org: Org;
  /** ISO 4217 code for money: the org's (USD when an older API sends none). */
  currency: string;
  signOut: () => Promise<void> | void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}
