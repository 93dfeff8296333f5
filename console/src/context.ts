import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.js';
import type { AccountView, SessionView } from './types.js';

export interface AppState {
  api: Api;
  session: SessionView;
  /** The accounts the user may open (an admin: all). */
  accounts: AccountView[];
  reloadAccounts(): Promise<void>;
  /** The account last opened: pages outside an account (settings, operator pages) keep showing it. */
  lastAccountId: string | undefined;
  setLastAccountId(id: string): void;
  signOut(): Promise<void>;
}

export const AppContext = createContext<AppState | undefined>(undefined);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('useApp outside the signed-in app');
  return state;
}
