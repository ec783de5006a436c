// The pricing schema's migrations (`@app/pricing/migrations`): one class per file, named by its
// timestamp, listed in the order they run, each with a `down` that undoes it. The host app runs
// them with its own, at start and with `npm run migrate` (docs/operations.md, "Migrations").
import { PricingSchema1764000000000 } from './1764000000000-pricing-schema';
import { DatabaseSideIntegrity1764000002000 } from './1764000002000-database-side-integrity';
import { ExclusionByKeyHash1764000003000 } from './1764000003000-exclusion-by-key-hash';
import { PriceRecordScopeIndex1764000004000 } from './1764000004000-price-record-scope-index';
import { ChangeLogAuthors1764000005000 } from './1764000005000-change-log-authors';
import { HistoryCheckByScope1764000006000 } from './1764000006000-history-check-by-scope';
import { RecordCount1764000007000 } from './1764000007000-record-count';
import { AvailabilityInChangeLog1764000008000 } from './1764000008000-availability-in-change-log';
import { ListPriceIndex1764000009000 } from './1764000009000-list-price-index';
import { ChangeLogChain1764000010000 } from './1764000010000-change-log-chain';
import { RuntimeGrants1764000010500 } from './1764000010500-runtime-grants';
import { OneClock1764000011000 } from './1764000011000-one-clock';
import { ReadOnlyDryRun1764000012000 } from './1764000012000-read-only-dry-run';
import { InitialAvailabilityLogged1764000012100 } from './1764000012100-initial-availability-logged';
import { GroupRoles1764000013000 } from './1764000013000-group-roles';

export { PRICING_ROLE_GRANTS } from './1764000013000-group-roles';

/** The pricing library's migrations, in order; the host app runs them with its own. */
export const pricingMigrations = [
  PricingSchema1764000000000,
  DatabaseSideIntegrity1764000002000,
  ExclusionByKeyHash1764000003000,
  PriceRecordScopeIndex1764000004000,
  ChangeLogAuthors1764000005000,
  HistoryCheckByScope1764000006000,
  RecordCount1764000007000,
  AvailabilityInChangeLog1764000008000,
  ListPriceIndex1764000009000,
  ChangeLogChain1764000010000,
  RuntimeGrants1764000010500,
  OneClock1764000011000,
  ReadOnlyDryRun1764000012000,
  InitialAvailabilityLogged1764000012100,
  GroupRoles1764000013000,
];
