// What several specs check against, written once: facts of the contract, stated here rather
// than read from the code under test.

/** The families of the public list, in the order docs/price-list-api.md gives them. */
export const FAMILY_ORDER = [
  'compute_instance',
  'network_floating_ip',
  'network_nat_gateway',
  'network_vpc_egress',
  'network_vpc_ingress',
  'network_vpc_internal',
  'storage_volume',
  'storage_snapshot',
  'observability_custom_metric',
  'observability_api_request',
  'observability_ingested_sample',
];

/** Every migration, in the order they run: what a fully migrated database has recorded. */
export const ALL_MIGRATIONS = [
  'PricingSchema1764000000000',
  'CreateVolumes1764000001000',
  'DatabaseSideIntegrity1764000002000',
  'ExclusionByKeyHash1764000003000',
  'PriceRecordScopeIndex1764000004000',
  'ChangeLogAuthors1764000005000',
  'HistoryCheckByScope1764000006000',
  'RecordCount1764000007000',
  'AvailabilityInChangeLog1764000008000',
  'ListPriceIndex1764000009000',
  'ChangeLogChain1764000010000',
  'RuntimeGrants1764000010500',
  'VolumesRuntimeGrants1764000010600',
  'OneClock1764000011000',
  'ReadOnlyDryRun1764000012000',
  'InitialAvailabilityLogged1764000012100',
  'GroupRoles1764000013000',
  'VolumesGroupRole1764000013100',
];
