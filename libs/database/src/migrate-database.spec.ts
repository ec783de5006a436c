import { groupGrantsOf, GroupRolesMissingError, SchemaBehindError } from './migrate-database';

describe('groupGrantsOf', () => {
  const roleGrants = [
    { function: 'pricing_grant_roles', roles: ['pricing_reader', 'pricing_writer'] },
    { function: 'volumes_grant_roles', roles: ['volumes_writer'] },
  ];

  it('names each function’s roles, in order, after the prefix', () => {
    expect(groupGrantsOf({ url: 'postgres://x', roleGrants, rolePrefix: 'staging_' })).toEqual({
      grants: [
        { function: 'pricing_grant_roles', roles: ['staging_pricing_reader', 'staging_pricing_writer'] },
        { function: 'volumes_grant_roles', roles: ['staging_volumes_writer'] },
      ],
    });
    expect(groupGrantsOf({ url: 'postgres://x', roleGrants })?.grants[1].roles).toEqual(['volumes_writer']);
  });

  it('grants nothing without roles', () => {
    expect(groupGrantsOf({ url: 'postgres://x' })).toBeUndefined();
    expect(groupGrantsOf({ url: 'postgres://x', roleGrants: [{ function: 'f', roles: [] }] })).toBeUndefined();
  });

  it('refuses a name PostgreSQL would read otherwise unquoted, or cut (63 bytes)', () => {
    for (const rolePrefix of ['Staging_', 'a-b_', 'x"; DROP ROLE y; --', 'p'.repeat(50)]) {
      expect(() => groupGrantsOf({ url: 'postgres://x', roleGrants, rolePrefix })).toThrow(/is no group role's name/);
    }
  });
});

describe('what a migration run says', () => {
  it('names the SQL that makes the missing group roles', () => {
    expect(new GroupRolesMissingError(['a_reader'], 'owner').message).toBe(
      'the group role a_reader does not exist, and the migration role owner may not create roles (no CREATEROLE): ' +
        'nothing was migrated; as a superuser or a role with CREATEROLE, run once: CREATE ROLE a_reader NOLOGIN; ' +
        'then migrate again (docs/operations.md, "Readers and writers")',
    );
  });

  it('names the pending migrations, the role, and the deploy step', () => {
    const error = new SchemaBehindError(['B1764000000002', 'C1764000000003'], 'svc', null);
    expect(error.message).toBe(
      'the database lacks migrations this code needs (B1764000000002, C1764000000003), and the role svc may not run ' +
        "them (it may not create the schema): run `npm run migrate` with DATABASE_MIGRATION_URL, the owner's URL, " +
        'as a deploy step',
    );
    expect(error.pending).toEqual(['B1764000000002', 'C1764000000003']);
  });
});
