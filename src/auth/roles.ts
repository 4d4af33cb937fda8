// User roles. Owners reach every site of their account, including sites created later; other
// roles reach only the sites they were given (table user_sites).

export const USER_ROLES = ['owner', 'administrator', 'assistant'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export function isUserRole(value: string): value is UserRole {
  return (USER_ROLES as readonly string[]).includes(value);
}

/** Roles that reach every site of their account. */
export const ROLES_REACHING_EVERY_SITE: readonly UserRole[] = ['owner'];

export function reachesEverySite(role: string): boolean {
  return (ROLES_REACHING_EVERY_SITE as readonly string[]).includes(role);
}

/** The upstream `role_level` rendering: OWNER, ADMINISTRATOR, ... */
export function roleLevel(role: string): string {
  return role.toUpperCase();
}
