import type { Key, Team, User } from '../api/admin-types';

/**
 * Display names for budget and report scope ids: the org, teams, users (name, else email) and keys ("name (prefix)").
 * Ids not in the lists are left out, so callers fall back to the raw id.
 */
export function scopeNames({
  org,
  teams = [],
  users = [],
  keys = [],
}: {
  org?: { id: string; name: string };
  teams?: readonly Pick<Team, 'id' | 'name'>[];
  users?: readonly Pick<User, 'id' | 'name' | 'email'>[];
  keys?: readonly Pick<Key, 'id' | 'name' | 'prefix'>[];
}): Map<string, string> {
  const names = new Map<string, string>(org ? [[org.id, org.name]] : []);
  for (const t of teams) names.set(t.id, t.name);
  for (const u of users) names.set(u.id, u.name ?? u.email);
  for (const k of keys) names.set(k.id, `${k.name} (${k.prefix})`);
  return names;
}
