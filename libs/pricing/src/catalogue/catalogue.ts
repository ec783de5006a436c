// Section 2.4 of the API document: the product families, in their published order,
// the shape of their product keys, their dimensions and their unit types.

import { quoteValue } from '../errors/bounded-text';

export const UNIT_TYPES = ['seconds', 'gib_hours', 'gb', 'metric_months', 'requests', 'samples'] as const;
export type UnitType = (typeof UNIT_TYPES)[number];

export type DimensionName = 'instance_type' | 'storage_class';

export interface ProductFamily {
  /** Family identifier, as published in `families[].family`. */
  readonly family: string;
  readonly unitType: UnitType;
  /** Product keys of a family without dimensions. */
  readonly fixedKeys?: readonly string[];
  /** For families with a dimension: the key prefix and the shape of the dimension value. */
  readonly dimension?: { readonly name: DimensionName; readonly prefix: string; readonly value: RegExp };
}

/** Instance types are dotted names: `g2.4`, `m1.small.2`. */
const INSTANCE_TYPE = /^[a-z][a-z0-9]*(?:\.[a-z0-9]+)+$/;
export const STORAGE_CLASSES = ['gp1', 'st1', 'io1'] as const;
export type StorageClass = (typeof STORAGE_CLASSES)[number];
const STORAGE_CLASS = /^(?:gp1|st1|io1)$/;
export const MAX_PRODUCT_KEY_LENGTH = 64;

/** compute.<instance_type> and storage.<storage_class>: the two families with a dimension. */
const INSTANCE_TYPE_DIMENSION = { name: 'instance_type', prefix: 'compute.', value: INSTANCE_TYPE } as const;
const STORAGE_CLASS_DIMENSION = { name: 'storage_class', prefix: 'storage.', value: STORAGE_CLASS } as const;

/** The product families in the order of section 2.4; `families` is published in this order. */
export const PRODUCT_FAMILIES: readonly ProductFamily[] = [
  { family: 'compute_instance', unitType: 'seconds', dimension: INSTANCE_TYPE_DIMENSION },
  { family: 'network_floating_ip', unitType: 'seconds', fixedKeys: ['network.floating_ip'] },
  { family: 'network_nat_gateway', unitType: 'seconds', fixedKeys: ['network.nat_gateway'] },
  { family: 'network_vpc_egress', unitType: 'gb', fixedKeys: ['network.vpc_egress'] },
  { family: 'network_vpc_ingress', unitType: 'gb', fixedKeys: ['network.vpc_ingress'] },
  { family: 'network_vpc_internal', unitType: 'gb', fixedKeys: ['network.vpc_internal'] },
  { family: 'storage_volume', unitType: 'gib_hours', dimension: STORAGE_CLASS_DIMENSION },
  { family: 'storage_snapshot', unitType: 'gib_hours', fixedKeys: ['storage.snapshot'] },
  { family: 'observability_custom_metric', unitType: 'metric_months', fixedKeys: ['observability.custom_metric'] },
  { family: 'observability_api_request', unitType: 'requests', fixedKeys: ['observability.api_request'] },
  { family: 'observability_ingested_sample', unitType: 'samples', fixedKeys: ['observability.ingested_sample'] },
];

export interface ProductKeyParts {
  readonly productKey: string;
  readonly family: ProductFamily;
  /** Position of the family in section 2.4 (0-based). */
  readonly familyOrder: number;
  /** The parts of the key, split out; absent for families without dimensions. */
  readonly dimensions?: Readonly<Partial<Record<DimensionName, string>>>;
}

/** Splits a product key into its family and dimensions; `undefined` when it fits no family. */
export function parseProductKey(productKey: string): ProductKeyParts | undefined {
  if (productKey.length > MAX_PRODUCT_KEY_LENGTH) return undefined;
  for (const [familyOrder, family] of PRODUCT_FAMILIES.entries()) {
    if (family.fixedKeys?.includes(productKey)) return { productKey, family, familyOrder };
    const dimension = family.dimension;
    if (dimension && productKey.startsWith(dimension.prefix)) {
      const value = productKey.slice(dimension.prefix.length);
      if (dimension.value.test(value)) {
        return { productKey, family, familyOrder, dimensions: { [dimension.name]: value } };
      }
    }
  }
  return undefined;
}

/** Why a product key is refused, for operators; `undefined` when the key is well formed. */
export function explainProductKey(productKey: string): string | undefined {
  if (parseProductKey(productKey)) return undefined;
  if (productKey.startsWith('compute.')) {
    return `${quoteValue(productKey)} is not compute.<instance_type> with a dotted instance type of lower-case letters and digits (e.g. compute.g2.4)`;
  }
  if (/^storage\.[^.]+$/.test(productKey)) {
    return `${quoteValue(productKey)} has no storage class of ${STORAGE_CLASSES.join(', ')} and is not storage.snapshot`;
  }
  if (productKey.length > MAX_PRODUCT_KEY_LENGTH) {
    return `product keys have at most ${MAX_PRODUCT_KEY_LENGTH} characters`;
  }
  return `${quoteValue(productKey)} fits no product family of section 2.4 (compute.<instance_type>, network.floating_ip, network.nat_gateway, network.vpc_egress, network.vpc_ingress, network.vpc_internal, storage.<gp1|st1|io1>, storage.snapshot, observability.custom_metric, observability.api_request, observability.ingested_sample)`;
}

export function isUnitType(value: unknown): value is UnitType {
  return typeof value === 'string' && (UNIT_TYPES as readonly string[]).includes(value);
}
