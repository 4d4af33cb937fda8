// User roles. Owners reach every site of their account, including sites created later; other
// roles reach only the sites they were given (table user_sites).

export const USER_ROLES = ['owner', 'administrator', 'assistant'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export function isUserRole(value: string): value is UserRole {
  return (USER_ROLES as readonly string[]).includes(value);
}

export function reachesEverySite(role: string): boolean {
  return role === 'owner';
}

/** The upstream `role_level` rendering: OWNER, ADMINISTRATOR, ... */
export function roleLevel(role: string): string {
  return role.toUpperCase();
}
